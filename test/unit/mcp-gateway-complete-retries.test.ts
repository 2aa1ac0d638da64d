import pino from "pino";
import { describe, expect, it } from "vitest";
import { callGuardedTool, type GuardedCall } from "@/lib/mcp-gateway/call-guarded-tool";
import type { TollgateClient, TollgateReply } from "@/lib/mcp-gateway/tollgate-client";

// The gateway's side of a Tollgate outage after the tool acted: it keeps the lease and keeps
// trying to record the outcome, and gives up only once the lease may belong to someone else.
const log = pino({ level: "silent" });
const reply = (status: number, body: Record<string, unknown> = {}, headers: Record<string, string> = {}): TollgateReply => ({ status, headers: new Headers(headers), body });

function fakeTollgate(options: { leaseMs: number; completes: (TollgateReply | Error)[]; heartbeat: () => TollgateReply }) {
  const calls = { heartbeats: 0, completes: 0 };
  const bodies: Record<string, unknown>[] = [];
  const now = Date.now();
  const client: TollgateClient = {
    claim: async () =>
      reply(
        201,
        { operationId: "op_1", state: "processing", tool: "tickets.create", attempt: { number: 1, fencingToken: "7", leaseExpiresAt: new Date(now + options.leaseMs).toISOString() }, downstreamKey: "dk_1", resultExpiresAt: null },
        { date: new Date(now).toUTCString() },
      ),
    heartbeat: async () => {
      calls.heartbeats += 1;
      return options.heartbeat();
    },
    complete: async (_operationId: string, body: Record<string, unknown>) => {
      bodies.push(body);
      const next = options.completes[Math.min(calls.completes, options.completes.length - 1)]!;
      calls.completes += 1;
      if (next instanceof Error) throw next;
      return next;
    },
  };
  return { client, calls, bodies };
}

const call: GuardedCall = { name: "tickets.create", tollgateTool: "tickets.create", args: { title: "x", idempotencyKey: "k" }, meta: undefined, keyInArguments: true, upstreamHasKey: false, checkArguments: () => undefined };
const upstream = async () => ({ content: [{ type: "text" as const, text: "opened" }] });

describe("recording an outcome while Tollgate is away", () => {
  it("keeps trying, heartbeating meanwhile, and records once Tollgate answers", async () => {
    const tollgate = fakeTollgate({ leaseMs: 3000, completes: [new Error("ECONNREFUSED"), reply(503), new Error("ECONNREFUSED"), reply(200)], heartbeat: () => reply(200) });
    const result = await callGuardedTool({ tollgate: tollgate.client, callUpstream: upstream, log, completeRetryDelaysMs: [50], completeRetryLimitMs: 60_000 }, call);
    expect(result._meta?.["io.tollgate/operation"]).toMatchObject({ outcome: "succeeded", completed: "recorded" });
    expect(tollgate.calls.completes).toBe(4);
  });

  it("stops at once when Tollgate refuses the complete (another attempt took over)", async () => {
    const tollgate = fakeTollgate({ leaseMs: 3000, completes: [reply(503), reply(409, { code: "lease-lost" })], heartbeat: () => reply(200) });
    const result = await callGuardedTool({ tollgate: tollgate.client, callUpstream: upstream, log, completeRetryDelaysMs: [50], completeRetryLimitMs: 60_000 }, call);
    expect(result._meta?.["io.tollgate/operation"]).toMatchObject({ completed: "lease-lost" });
    expect(tollgate.calls.completes).toBe(2);
  });

  it("gives up after the limit and lets the lease go (no more heartbeats)", async () => {
    const tollgate = fakeTollgate({ leaseMs: 1200, completes: [reply(503)], heartbeat: () => reply(200) });
    const started = Date.now();
    const result = await callGuardedTool({ tollgate: tollgate.client, callUpstream: upstream, log, completeRetryDelaysMs: [100], completeRetryLimitMs: 1000 }, call);
    expect(result._meta?.["io.tollgate/operation"]).toMatchObject({ completed: "not-recorded" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(tollgate.calls.heartbeats).toBeGreaterThanOrEqual(1);
    const beats = tollgate.calls.heartbeats;
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(tollgate.calls.heartbeats).toBe(beats);
  });
});

describe("a complete Tollgate refuses for its body", () => {
  const options = (tollgate: TollgateClient) => ({ tollgate, callUpstream: upstream, log, completeRetryDelaysMs: [50], completeRetryLimitMs: 60_000 });

  it("records the outcome again at once without the result (a note in its place), keeping what the first caller gets", async () => {
    const tollgate = fakeTollgate({ leaseMs: 3000, completes: [reply(400, { code: "invalid-request" }), reply(200)], heartbeat: () => reply(200) });
    const result = await callGuardedTool(options(tollgate.client), call);
    expect(result._meta?.["io.tollgate/operation"]).toMatchObject({ outcome: "succeeded", completed: "recorded" });
    expect(result.content).toEqual([{ type: "text", text: "opened" }]);
    expect(tollgate.bodies).toHaveLength(2);
    expect(tollgate.bodies[0]).toMatchObject({ outcome: "succeeded", result: { body: { content: [{ text: "opened" }] } } });
    expect(tollgate.bodies[1]).toMatchObject({ outcome: "succeeded", result: { body: { content: [{ text: expect.stringContaining("Tollgate could not keep its result") }] } } });
  });

  it("an unknown outcome whose error text PostgreSQL cannot hold is sent again with that text cleaned and cut", async () => {
    const failing = async () => ({ content: [{ type: "text" as const, text: "boom \u0000 raw" }], isError: true, _meta: { "io.tollgate/outcome": "unknown" } });
    const tollgate = fakeTollgate({ leaseMs: 3000, completes: [reply(400, { code: "invalid-request" }), reply(200)], heartbeat: () => reply(200) });
    await callGuardedTool({ ...options(tollgate.client), callUpstream: failing }, call);
    expect(tollgate.bodies[1]).toMatchObject({ outcome: "unknown" });
    expect((tollgate.bodies[0]!.error as { message: string }).message).toContain("\u0000");
    const error = tollgate.bodies[1]!.error as { message: string };
    expect(error.message).not.toContain("\u0000");
    expect(error.message).toContain("boom \uFFFD raw");
  });

  it("a result with text PostgreSQL cannot hold is sent again cleaned (U+0000 → U+FFFD), keys and strings, before it is given up", async () => {
    const raw = async () => ({ content: [{ type: "text" as const, text: "dump \u0000 end" }], structuredContent: { "k\u0000": ["\uD800x"] } });
    const tollgate = fakeTollgate({ leaseMs: 3000, completes: [reply(400, { code: "invalid-request" }), reply(200)], heartbeat: () => reply(200) });
    const result = await callGuardedTool({ ...options(tollgate.client), callUpstream: raw }, call);
    expect(result._meta?.["io.tollgate/operation"]).toMatchObject({ completed: "recorded" });
    expect(result.content).toEqual([{ type: "text", text: "dump \u0000 end" }]);
    expect(tollgate.bodies).toHaveLength(2);
    expect(tollgate.bodies[1]).toMatchObject({ outcome: "succeeded", result: { statusCode: 200, body: { content: [{ type: "text", text: "dump \uFFFD end" }], structuredContent: { "k\uFFFD": ["\uFFFDx"] } } } });
  });

  it("a cleaned result refused again is replaced by the note; the note refused is final (three tries at most)", async () => {
    const raw = async () => ({ content: [{ type: "text" as const, text: "dump \u0000 end" }] });
    const tollgate = fakeTollgate({ leaseMs: 3000, completes: [reply(400, { code: "invalid-request" })], heartbeat: () => reply(200) });
    const result = await callGuardedTool({ ...options(tollgate.client), callUpstream: raw }, call);
    expect(result._meta?.["io.tollgate/operation"]).toMatchObject({ completed: "invalid-request" });
    expect(tollgate.bodies).toHaveLength(3);
    expect(JSON.stringify(tollgate.bodies[1])).toContain("dump \uFFFD end");
    expect(JSON.stringify(tollgate.bodies[2])).toContain("Tollgate could not keep its result");
  });

  it("a result too large (413) goes straight to the note: cleaning would not make it smaller", async () => {
    const raw = async () => ({ content: [{ type: "text" as const, text: "dump \u0000 end" }] });
    const tollgate = fakeTollgate({ leaseMs: 3000, completes: [reply(413, { code: "payload-too-large" }), reply(200)], heartbeat: () => reply(200) });
    await callGuardedTool({ ...options(tollgate.client), callUpstream: raw }, call);
    expect(tollgate.bodies).toHaveLength(2);
    expect(JSON.stringify(tollgate.bodies[1])).toContain("Tollgate could not keep its result");
  });

  it("takes a second refusal as final (one retry, never a loop)", async () => {
    const tollgate = fakeTollgate({ leaseMs: 3000, completes: [reply(413, { code: "payload-too-large" }), reply(400, { code: "invalid-request" })], heartbeat: () => reply(200) });
    const result = await callGuardedTool(options(tollgate.client), call);
    expect(result._meta?.["io.tollgate/operation"]).toMatchObject({ completed: "invalid-request" });
    expect(tollgate.calls.completes).toBe(2);
  });
});
