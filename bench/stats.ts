// The middle value (mean of the two middle ones for an even count): rounds of a noisy
// measurement are summarised by it, so one disturbed round does not move the figure.
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
