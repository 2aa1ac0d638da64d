// Policy numbers as people read them: "500 ms", "30 s", "1 min", "24 h", "3 d".
export function formatMs(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  return formatSeconds(ms / 1000);
}

export function formatSeconds(s: number): string {
  const unit = (n: number, u: string) => `${Number.isInteger(n) ? n : n.toFixed(1)} ${u}`;
  if (s < 60) return unit(s, "s");
  if (s < 3600) return unit(s / 60, "min");
  if (s < 86_400) return unit(s / 3600, "h");
  return unit(s / 86_400, "d");
}

// Retention is set in hours: "24 h", "72 h"; whole weeks and more as days.
export function formatHours(h: number): string {
  return h >= 168 && h % 24 === 0 ? `${h / 24} d` : `${h} h`;
}
