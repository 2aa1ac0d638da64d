import { defaultDeliverySettings, type DeliverySettings } from "@/lib/outbox/delivery-settings";
import { defaultProbeSettings, type ProbeSettings } from "@/lib/probes/run-due-probes";

// Everything the worker can be tuned with; the CLI maps flags onto it and tests shrink it.
export type WorkerSettings = {
  // Jobs one worker process runs at once.
  concurrency: number;
  // Interval of the lease reaper and of the probe pass (the library's crontab is per minute;
  // leases are seconds long, so these two reschedule themselves as keyed jobs).
  tickSeconds: number;
  // A job locked this long by a worker that no longer holds its liveness lock is run again.
  abandonedAfterSeconds: number;
  // How often the sweep for abandoned jobs and stalled deliveries runs.
  recoverEverySeconds: number;
  // Seconds after expiry before the reaper makes a lease unknown (a late report may still come).
  leaseGraceSeconds: number;
  // Outbox events are kept this many days once delivered (or dead).
  outboxRetentionDays: number;
  // graphile-worker's poll for jobs due later (new jobs arrive at once through LISTEN/NOTIFY).
  pollIntervalMs: number;
  delivery: DeliverySettings;
  probes: ProbeSettings;
  // CIDRs outbound calls may reach although private or reserved (TOLLGATE_EGRESS_ALLOW); empty: public only.
  egressAllow: string[];
};

export const defaultWorkerSettings: WorkerSettings = {
  concurrency: 4,
  tickSeconds: 5,
  abandonedAfterSeconds: 30,
  recoverEverySeconds: 15,
  leaseGraceSeconds: 0,
  outboxRetentionDays: 30,
  pollIntervalMs: 1000,
  delivery: defaultDeliverySettings,
  probes: defaultProbeSettings,
  egressAllow: [],
};
