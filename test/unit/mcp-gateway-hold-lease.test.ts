import pino from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { holdLease } from "@/lib/mcp-gateway/hold-lease";
import type { TollgateClient, TollgateReply } from "@/lib/mcp-gateway/tollgate-client";

// The gateway's heartbeats while a guarded tool runs: a third of the lease apart, the lease read
// against Tollgate's clock, and re-read from every accepted heartbeat.
describe("holding a lease", () => {
  beforeEach(() => vi.useFakeTimers({ now: Date.parse("2026-12-02T10:00:00.000Z") }));
  afterEach(() => vi.useRealTimers());

  // A Tollgate whose heartbeats grant `leaseSeconds()` from now, as the tool's lease length is now.
  function fakeTollgate(leaseSeconds: () => number) {
    const beats: number[] = [];
    const reply = (): TollgateReply => ({
      status: 200,
      headers: new Headers({ date: new Date().toUTCString() }),
      body: { leaseExpiresAt: new Date(Date.now() + leaseSeconds() * 1000).toISOString() },
    });
    const tollgate: TollgateClient = {
      claim: () => Promise.reject(new Error("not used")),
      complete: () => Promise.reject(new Error("not used")),
      heartbeat: () => {
        beats.push(Date.now());
        return Promise.resolve(reply());
      },
    };
    return { tollgate, beats };
  }

  it("follows a lease an admin shortened while the call runs: the next beat comes before the new lease ends", async () => {
    let lease = 300;
    const { tollgate, beats } = fakeTollgate(() => lease);
    const start = Date.now();
    const held = holdLease({
      tollgate,
      operationId: "op_1",
      fencingToken: "7",
      leaseExpiresAt: new Date(start + 300_000).toISOString(),
      tollgateNow: start,
      log: pino({ level: "silent" }),
    });

    await vi.advanceTimersByTimeAsync(99_666);
    expect(beats.map((t) => t - start)).toEqual([99_666]);
    // The admin shortens the tool's lease to 10 s; the next heartbeat grants 10 s. The one after
    // it must come within those 10 s, not 99.7 s later.
    lease = 10;
    await vi.advanceTimersByTimeAsync(60_000 + 40_000);
    // The second beat still follows the first's 300 s lease (its Date header's whole second
    // makes the lease read up to a second longer), and grants 10 s.
    expect(beats[1]! - start).toBeGreaterThan(199_000);
    expect(beats[1]! - start).toBeLessThan(200_000);
    await vi.advanceTimersByTimeAsync(60_000);
    const gaps = beats.slice(2).map((t, i) => t - beats[i + 1]!);
    expect(gaps.length).toBeGreaterThan(15);
    // A third of the 10 s lease, less the second the Date header's whole seconds may hide.
    for (const gap of gaps) {
      expect(gap).toBeGreaterThanOrEqual(3_000);
      expect(gap).toBeLessThanOrEqual(3_333);
    }
    held.stop();
    const count = beats.length;
    await vi.advanceTimersByTimeAsync(600_000);
    expect(beats.length).toBe(count);
  });
});
