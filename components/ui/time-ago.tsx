// "3 min ago" for scanning, with the exact UTC time on hover and for screen readers.
export function TimeAgo({ at, now = Date.now() }: { at: Date | string | null; now?: number }) {
  if (!at) return <span className="muted">—</span>;
  const date = typeof at === "string" ? new Date(at) : at;
  return (
    <time dateTime={date.toISOString()} title={date.toISOString()}>
      {formatAge(now - date.getTime())}
    </time>
  );
}

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
