// Timestamps in the trace are UTC, to the millisecond: an operator lines them up with provider
// logs, and server and browser must render the same text.
export function utcDate(iso: string): string {
  return iso.slice(0, 10);
}

export function utcTime(iso: string): string {
  return iso.slice(11, 23);
}

export function utcDateTime(iso: string): string {
  return `${utcDate(iso)} ${utcTime(iso)} UTC`;
}

// "+1.2 s" between two entries; nothing when they happened together.
export function gap(fromIso: string, toIso: string): string | null {
  const ms = new Date(toIso).getTime() - new Date(fromIso).getTime();
  if (ms <= 0) return null;
  if (ms < 1000) return `+${ms} ms`;
  if (ms < 60_000) return `+${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `+${Math.round(ms / 60_000)} min`;
  if (ms < 86_400_000) return `+${(ms / 3_600_000).toFixed(1)} h`;
  return `+${(ms / 86_400_000).toFixed(1)} d`;
}
