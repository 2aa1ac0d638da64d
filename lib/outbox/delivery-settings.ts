// How the worker delivers outbox events. Exponential backoff with equal jitter between tries
// (baseMs·2^(n-1), capped, half of it random), for `windowSeconds` (24 h) after the first
// try, then dead. Passed in as options so tests can shrink every interval.
export type DeliverySettings = {
  baseMs: number;
  capMs: number;
  windowSeconds: number;
  // One try's time limit: no answer by then is a failed try (the receiver may still have it:
  // the next try carries the same webhook-id, so it can dedupe).
  timeoutMs: number;
};

export const defaultDeliverySettings: DeliverySettings = {
  baseMs: 10_000,
  capMs: 2 * 3600_000,
  windowSeconds: 24 * 3600,
  timeoutMs: 10_000,
};
