import type { Logger } from "pino";
import type { TollgateClient } from "@/lib/mcp-gateway/tollgate-client";

export type HeldLease = { stop: () => void };

// Heartbeats while the upstream tool runs and until its outcome is recorded, a third of the
// lease apart, so a slow tool keeps its lease and a gateway that dies loses it (then the tool's
// takeover policy decides). A 409 means the lease is gone (taken over, or settled by a webhook or
// an operator).
//
// The lease's length is read against Tollgate's clock (the claim's Date header), not this
// machine's: a gateway whose clock runs behind would otherwise beat too rarely. The header has
// whole seconds, so a second is taken off. Each accepted heartbeat says the lease it granted,
// which follows the tool's lease length as it is now: an admin who shortened it while a call
// ran would otherwise see the lease lapse between two beats timed for the old one (review,
// 2026-12-02), and the operation turn unknown or be taken over mid-call.
export function beatInterval(leaseExpiresAt: string, tollgateNow: number): number | undefined {
  const leaseMs = Date.parse(leaseExpiresAt) - tollgateNow;
  if (!Number.isFinite(leaseMs)) return undefined;
  return Math.max(250, Math.floor((leaseMs - 1000) / 3));
}

export function holdLease(options: {
  tollgate: TollgateClient;
  operationId: string;
  fencingToken: string;
  leaseExpiresAt: string;
  tollgateNow: number;
  log: Logger;
}): HeldLease {
  let everyMs = beatInterval(options.leaseExpiresAt, options.tollgateNow) ?? 250;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const beat = async () => {
    try {
      // A heartbeat that hangs must not outlast the next one's turn: with a short lease, one
      // stuck request would let the lease lapse.
      const reply = await options.tollgate.heartbeat(options.operationId, options.fencingToken, Math.min(10_000, everyMs));
      if (reply.status === 409) {
        // After stop() a 409 is the recorded outcome itself (the operation left `processing`).
        if (!stopped) options.log.warn({ operationId: options.operationId, code: reply.body.code }, "mcp gateway: lease lost");
        return;
      }
      if (reply.status === 200 && typeof reply.body.leaseExpiresAt === "string") {
        everyMs = beatInterval(reply.body.leaseExpiresAt, Date.parse(reply.headers.get("date") ?? "") || Date.now()) ?? everyMs;
      } else if (reply.status !== 200) {
        options.log.warn({ operationId: options.operationId, status: reply.status }, "mcp gateway: heartbeat refused");
      }
    } catch (error) {
      options.log.warn({ operationId: options.operationId, err: (error as Error).message }, "mcp gateway: heartbeat failed; trying again");
    }
    if (!stopped) timer = setTimeout(beat, everyMs);
  };
  timer = setTimeout(beat, everyMs);

  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
