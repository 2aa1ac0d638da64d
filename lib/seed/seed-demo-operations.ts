import type { Db } from "@/lib/db";
import type { AuthenticatedKey } from "@/lib/api-keys/authenticate-api-key";
import { createApiKey } from "@/lib/api-keys/create-api-key";
import { revokeApiKey } from "@/lib/api-keys/revoke-api-key";
import { ProblemError } from "@/lib/http/problem";
import { claimOperation } from "@/lib/operations/claim-operation";
import { completeOperation } from "@/lib/operations/complete-operation";
import { heartbeatOperation } from "@/lib/operations/heartbeat-operation";
import { resolveOperation } from "@/lib/operations/resolve-operation";
import { getTool } from "@/lib/tools/get-tool";
import { putTool } from "@/lib/tools/put-tool";
import { createUser } from "@/lib/users/create-user";
import { setUserDisabled } from "@/lib/users/disable-user";
import { buildDemoPlan, type DemoAction, type DemoAgent, type DemoEvent, type DemoOp, type DemoPerson } from "@/lib/seed/demo-plan";
import { decideDemoApproval } from "@/lib/seed/decide-demo-approval";
import { shiftDemoHistory, type Breakpoint } from "@/lib/seed/shift-demo-history";

export const demoPeople: Record<DemoPerson | "jordan" | "alex", { email: string; name: string; role: "viewer" | "operator" | "approver" | "admin" }> = {
  admin: { email: "admin@demo.tollgate.local", name: "Demo admin", role: "admin" },
  riley: { email: "riley.ops@demo.tollgate.local", name: "Riley (operations)", role: "operator" },
  sam: { email: "sam.approver@demo.tollgate.local", name: "Sam (release manager)", role: "approver" },
  alex: { email: "alex.viewer@demo.tollgate.local", name: "Alex (support lead)", role: "viewer" },
  jordan: { email: "jordan@demo.tollgate.local", name: "Jordan (left the team)", role: "operator" },
};

const agentKeys: Record<Exclude<DemoAgent, "demo-agent">, { principal: string; tools: string[] }> = {
  "support-bot": { principal: "support-bot", tools: ["tickets.create"] },
  "legacy-agent": { principal: "support-bot-v1", tools: [] },
  "billing-worker-a": { principal: "billing-agent", tools: ["payments.charge"] },
  "billing-worker-b": { principal: "billing-agent", tools: ["payments.charge"] },
  "release-bot": { principal: "release-bot", tools: ["deploy.production"] },
};

type Live = { id?: string; token?: bigint; holder?: DemoAgent };

// A few hundred operations over the last three days, in every state, made by replaying the
// demo plan (lib/seed/demo-plan.ts) through the same functions the API and the console call:
// tollgate_claim / _heartbeat / _complete / _resolve write the operations, attempts, fencing
// tokens and audit events exactly as in production. Steps run in the order of their story
// time, so fencing tokens and audit ids grow with time. They really run within a few seconds,
// so each write's real time is noted (a breakpoint per step) and afterwards every timestamp is
// moved to its story time (lib/seed/shift-demo-history.ts).
export async function seedDemoOperations(options: {
  db: Db;
  tenant: { id: string; slug: string };
  demoAgentKeyId: string;
  secret: string;
  setupStartedAt: Date;
  now?: number;
}): Promise<{ operations: number; steps: number }> {
  const { db, tenant, secret } = options;
  const plan = buildDemoPlan({ now: options.now ?? Date.now() });
  const setupActor = "system:seed";

  const keys = new Map<DemoAgent, AuthenticatedKey>();
  keys.set("demo-agent", { id: options.demoAgentKeyId, tenantId: tenant.id, tenantSlug: tenant.slug, principal: "demo-agent", role: "agent", tools: [] });
  for (const [name, spec] of Object.entries(agentKeys) as [Exclude<DemoAgent, "demo-agent">, (typeof agentKeys)["support-bot"]][]) {
    const { key } = await createApiKey({ db, tenantId: tenant.id, input: { principal: spec.principal, role: "agent", tools: spec.tools }, actor: setupActor });
    keys.set(name, { id: key.id, tenantId: tenant.id, tenantSlug: tenant.slug, principal: spec.principal, role: "agent", tools: spec.tools });
  }
  await createApiKey({ db, tenantId: tenant.id, input: { principal: "oncall-approver", role: "approver" }, actor: setupActor });
  const userIds = new Map<string, string>();
  for (const [name, person] of Object.entries(demoPeople)) {
    if (name === "admin") continue;
    const user = await createUser({ db, actor: setupActor, input: { ...person, tenants: [tenant.slug] } });
    userIds.set(name, user.id);
  }
  const admin = await db.user.findUniqueOrThrow({ where: { email: demoPeople.admin.email }, select: { id: true, email: true } });

  const clock = await measureClock(db);
  const breakpoints: Breakpoint[] = [{ target: "*", r: new Date(options.setupStartedAt.getTime() - 1000), v: new Date(plan.setupAt - 1000) }];
  const lastEnd = new Map<string, number>();
  const live = new Map<DemoOp, Live>();
  let steps = 0;

  for (const event of plan.events) {
    const knownTarget = "op" in event ? (live.get(event.op)?.id ? `operation:${live.get(event.op)?.id}` : null) : null;
    // Two steps of one story must be apart in real time, so each write is told apart by its time.
    if (knownTarget) await waitUntil((lastEnd.get(knownTarget) ?? 0) + clock.gapMs);
    const r = new Date(Math.floor(Date.now() + clock.skewMs - clock.uncertaintyMs));
    const target = "op" in event ? await runStep(event.op, event.action) : await runAdmin(event.admin);
    breakpoints.push({ target, r, v: new Date(event.at) });
    lastEnd.set(target, Date.now());
    steps++;
  }
  await shiftDemoHistory({ db, tenantId: tenant.id, breakpoints });
  return { operations: plan.ops.length, steps };

  async function runStep(op: DemoOp, action: DemoAction): Promise<string> {
    const state = live.get(op) ?? {};
    live.set(op, state);
    const key = (agent: DemoAgent | undefined) => keys.get(agent ?? op.agent) as AuthenticatedKey;
    switch (action.kind) {
      case "claim": {
        if ((action.expire === "lease" || action.expire === "backoff") && state.id) await expire(db, state.id, action.expire);
        const agent = action.agent ?? op.agent;
        const restore = action.expire === "approval" && state.id ? await expireApproval(db, state.id) : null;
        try {
          const outcome = await claimOperation({ db, key: key(agent), idempotencyKey: op.idempotencyKey, secret, input: { tool: op.tool, args: action.args ?? op.args, workflowId: op.workflowId } });
          state.id = outcome.kind === "replay" ? outcome.operationId : String(outcome.body.operationId);
          if (outcome.kind === "granted") {
            state.token = BigInt(outcome.body.attempt.fencingToken);
            state.holder = agent;
          }
        } catch (error) {
          // 409, 422, 403: answers the story expects (in progress, unknown, reused key, rejected).
          const id = error instanceof ProblemError ? error.extras.operationId : undefined;
          if (typeof id !== "string") throw error;
          state.id = id;
        } finally {
          if (restore && state.id) await db.$executeRaw`UPDATE approval SET expires_at = ${restore} WHERE operation_id = ${state.id}`;
        }
        break;
      }
      case "heartbeat":
        await heartbeatOperation({ db, key: key(state.holder), operationId: required(state.id), fencingToken: required(state.token) });
        break;
      case "complete": {
        const { kind: _kind, ...input } = action;
        try {
          await completeOperation({ db, key: key(state.holder), operationId: required(state.id), input: { ...input, fencingToken: required(state.token) } });
        } catch (error) {
          // A late report after an operator's resolution: 409 already-resolved, and the operation is flagged.
          if (!(error instanceof ProblemError && error.code === "already-resolved")) throw error;
        }
        break;
      }
      case "decide":
        await decideDemoApproval({ db, tenantId: tenant.id, operationId: required(state.id), decision: action.decision, reason: action.reason, actor: `user:${demoPeople.sam.email}` });
        break;
      case "resolve": {
        if (action.expireLease) await expire(db, required(state.id), "lease");
        const { outcome, reason, resourceId, evidence } = action;
        await resolveOperation({ db, tenantId: tenant.id, operationId: required(state.id), input: { outcome, reason, resourceId, evidence }, actor: `user:${demoPeople.riley.email}` });
        break;
      }
    }
    return `operation:${required(state.id)}`;
  }

  async function runAdmin(step: Extract<DemoEvent, { admin: unknown }>["admin"]): Promise<string> {
    const actor = `user:${admin.email}`;
    switch (step.kind) {
      case "revoke-key": {
        const id = required(keys.get(step.agent)?.id);
        await revokeApiKey({ db, id, tenantId: tenant.id, actor });
        return `api_key:${id}`;
      }
      case "disable-user": {
        const userId = required(userIds.get(step.person));
        await setUserDisabled({ db, tenantId: tenant.id, userId, disabled: true, reason: "Left the company", actor: admin });
        return `user:${userId}`;
      }
      case "describe-tool": {
        const tool = required(await getTool({ db, tenantId: tenant.id, name: step.tool }));
        await putTool({ db, tenantId: tenant.id, name: step.tool, definition: { description: step.description, annotations: tool.annotations, policy: tool.policy }, actor });
        return `tool:${step.tool}`;
      }
    }
  }
}

// Moves a deadline to "now", so the next step sees the lease or backoff as over, as it would
// after the story's real pause. Whatever the next step writes replaces the moved value.
async function expire(db: Db, operationId: string, what: "lease" | "backoff"): Promise<void> {
  if (what === "lease") await db.$executeRaw`UPDATE operation SET lease_expires_at = now() - interval '1 millisecond' WHERE id = ${operationId} AND state = 'processing'`;
  if (what === "backoff") await db.$executeRaw`UPDATE operation SET not_before = now() WHERE id = ${operationId} AND state = 'pending'`;
}

// An approval's expiry is kept (the trace shows when it ran out), so it is put back after the claim.
async function expireApproval(db: Db, operationId: string): Promise<Date | null> {
  const rows = await db.$queryRaw<{ expires_at: Date }[]>`
    UPDATE approval a SET expires_at = now() - interval '1 millisecond' FROM approval old
    WHERE a.id = old.id AND a.operation_id = ${operationId} AND a.state = 'pending' RETURNING old.expires_at`;
  return rows[0]?.expires_at ?? null;
}

// The database's clock against ours (the same machine for the embedded database, but
// DATABASE_URL may point elsewhere), so a step's breakpoint is never after its own writes.
async function measureClock(db: Db): Promise<{ skewMs: number; uncertaintyMs: number; gapMs: number }> {
  let best = { skewMs: 0, uncertaintyMs: Infinity };
  // The round trip bounds the error; the fastest of a few is the tightest bound.
  for (let i = 0; i < 5; i++) {
    const before = Date.now();
    const rows = await db.$queryRaw<{ t: Date }[]>`SELECT clock_timestamp() AS t`;
    const after = Date.now();
    const uncertaintyMs = (after - before) / 2 + 1;
    if (uncertaintyMs < best.uncertaintyMs) best = { skewMs: (rows[0]?.t.getTime() ?? after) - (before + after) / 2, uncertaintyMs };
  }
  return { ...best, gapMs: Math.ceil(2 * best.uncertaintyMs + 2) };
}

async function waitUntil(ms: number): Promise<void> {
  while (Date.now() < ms) await new Promise((resolve) => setTimeout(resolve, 1));
}

function required<T>(value: T | null | undefined): T {
  if (value === null || value === undefined) throw new Error("demo seed: a story step ran before the step it depends on");
  return value;
}
