import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/http";
import { startFakeProvider, type FakeProvider } from "../support/fake-provider";
import { seedTenant, startTestApp, type TenantKeys, type TestApp } from "../support/test-app";
import { startWorkerProcess, type WorkerProcess } from "../support/worker-process";
import { endLease } from "../support/wait-for-lease";
import { waitFor } from "../support/wait-for";

// The crash between the provider's effect and the complete: an executor process is SIGKILLed
// right after the provider took its call. With takeover "never" the worker's lease reaper makes
// the outcome unknown and nobody may run it again; with takeover "deduplicated" the next attempt
// reuses the side effect's downstream key and the provider dedupes. Either way the provider holds
// exactly one effect.

let app: TestApp;
let keys: TenantKeys;
let worker: WorkerProcess;
const providers: FakeProvider[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  app = await startTestApp();
  keys = await seedTenant(app.db, "crash");
  worker = await startWorkerProcess(app.url);
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  await worker?.stop();
  for (const p of providers) await p.stop();
  await app?.stop();
});

type Run = { child: ChildProcess; lines: string[]; exited: Promise<number | null> };

function runExecutor(config: Record<string, unknown>): Run {
  const child = spawn(process.execPath, ["--import", "tsx", path.resolve("test/support/executor.ts")], {
    env: { ...process.env, EXECUTOR: JSON.stringify({ baseUrl: app.baseUrl, agentKey: keys.agent, ...config }) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const lines: string[] = [];
  child.stdout?.on("data", (chunk: Buffer) => lines.push(...chunk.toString("utf8").split("\n").filter(Boolean)));
  child.stderr?.on("data", (chunk: Buffer) => lines.push(...chunk.toString("utf8").split("\n").filter(Boolean)));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, lines, exited };
}

async function line(run: Run, prefix: string): Promise<Record<string, unknown>> {
  const found = await waitFor(`${prefix} from the executor`, () => run.lines.find((l) => l.startsWith(`${prefix} `)), 30_000);
  return JSON.parse(found.slice(prefix.length + 1)) as Record<string, unknown>;
}

async function tool(name: string, policy: Record<string, unknown>): Promise<string> {
  const res = await call(app.baseUrl, "PUT", `/api/v1/tools/${name}`, { key: keys.admin, body: { policy } });
  expect(res.status, res.text).toBe(201);
  return name;
}

async function provider(dedupe: boolean): Promise<FakeProvider> {
  const p = await startFakeProvider({ dedupe });
  providers.push(p);
  return p;
}

describe("executor killed after the provider call", () => {
  it("takeover never: the reaper makes the outcome unknown (no agent needed), nobody runs it again, one effect", async () => {
    const fake = await provider(false);
    // A long lease, ended by hand once the executor is dead: the executor needs it live for its
    // claim, intent, provider call and "sent" report, which 1 s cannot promise on a loaded machine.
    const name = await tool("crash.never", { leaseSeconds: 60, takeover: "never" });
    const idem = `idem-${randomUUID()}`;
    const config = { tool: name, idem, args: { amount: 4200 }, providerUrl: fake.url, effect: "charge", complete: false };
    const first = runExecutor(config);
    const called = await line(first, "CALLED");

    first.child.kill("SIGKILL");
    expect(await first.exited).toBeNull();

    const operationId = called.operationId as string;
    await endLease(app.db, operationId);
    await waitFor("unknown", async () => (await app.db.operation.findUniqueOrThrow({ where: { id: operationId } })).state === "unknown");
    const audit = await app.db.auditEvent.findFirstOrThrow({ where: { targetId: operationId, action: "operation.unknown" } });
    expect(audit.actor).toBe("system:lease-reaper");
    // The executor's retry is told to reconcile, not to call the provider again.
    const second = runExecutor(config);
    expect(await second.exited).toBe(3);
    expect(second.lines.join("\n")).toMatch(/^CLAIM 409 .*"code":"outcome-unknown"/m);
    expect(fake.effects()).toHaveLength(1);
    expect(fake.effects()[0]!.downstreamKey).toBe(called.effectKey);
    // What an operator needs to reconcile: the effect was sent, with its key and the provider's id.
    const effects = await app.db.sideEffect.findMany({ where: { operationId } });
    expect(effects).toMatchObject([{ name: "charge", state: "sent", downstreamKey: called.effectKey, providerResourceId: fake.effects()[0]!.id }]);
  });

  it("takeover deduplicated: the next attempt reuses the effect's downstream key, the provider dedupes, one effect", async () => {
    const fake = await provider(true);
    const name = await tool("crash.dedup", { leaseSeconds: 60, takeover: "deduplicated", maxAttempts: 3 });
    const idem = `idem-${randomUUID()}`;
    const config = { tool: name, idem, args: { amount: 990 }, providerUrl: fake.url, effect: "charge", complete: false };
    const first = runExecutor(config);
    const called1 = await line(first, "CALLED");
    first.child.kill("SIGKILL");
    await first.exited;
    await endLease(app.db, called1.operationId as string);

    const second = runExecutor({ ...config, complete: true });
    const called2 = await line(second, "CALLED");
    expect(await second.exited).toBe(0);

    expect(called2).toMatchObject({ operationId: called1.operationId, attempt: 2, effectKey: called1.effectKey, previousState: "sent", duplicate: true, effectId: called1.effectId });
    expect(fake.effects()).toHaveLength(1);
    expect(fake.requests()).toBe(2);
    const op = await app.db.operation.findUniqueOrThrow({ where: { id: called1.operationId as string } });
    expect(op).toMatchObject({ state: "succeeded", attemptCount: 2, takeoverCount: 1, result: { resourceId: called1.effectId } });
    expect(await app.db.sideEffect.findMany({ where: { operationId: op.id } })).toMatchObject([{ state: "confirmed", attemptNumber: 2, downstreamKey: called1.effectKey }]);
  });
});
