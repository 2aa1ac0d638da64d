// "3 min ago", "in 2.5 h": relative times as the console writes them. Plain functions (no
// "use client"), so server components format with them too.
export function formatAge(ms: number): string {
  const future = ms < 0;
  const s = Math.abs(ms) / 1000;
  const text =
    s < 60 ? `${Math.round(s)} s` : s < 3600 ? `${Math.round(s / 60)} min` : s < 86400 ? `${(s / 3600).toFixed(s < 36000 ? 1 : 0)} h` : `${(s / 86400).toFixed(1)} d`;
  return future ? `in ${text}` : `${text} ago`;
}

export function formatDuration(ms: number): string {
  return formatAge(ms).replace(/ ago$/, "").replace(/^in /, "");
}
