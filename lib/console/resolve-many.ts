import { z } from "zod";
import type { Db } from "@/lib/db";
import { ProblemError } from "@/lib/http/problem";
import { log } from "@/lib/log";
import { resolveOperation } from "@/lib/operations/resolve-operation";
import { resolveRequestSchema, seenAttemptsSchema, type ResolveRequest } from "@/lib/operations/operation-schemas";
import { flagTimeSchema } from "@/lib/operations/clear-flag";

// The console's resolve says how many attempts the person saw and which flag (its time, null for
// none): see resolveOperation's seenAttempts and seenFlaggedAt.
export const consoleResolveRequestSchema = resolveRequestSchema
  .extend({ seenAttempts: seenAttemptsSchema.optional(), seenFlaggedAt: flagTimeSchema.nullable().optional() })
  .strict();

export const resolveBulkRequestSchema = resolveRequestSchema
  .extend({
    operationIds: z.array(z.string().min(1).max(100)).min(1, "select at least one operation").max(500),
    // Per operation id, as the rows showed them.
    seenAttempts: z.record(z.string(), seenAttemptsSchema).optional(),
    seenFlags: z.record(z.string(), flagTimeSchema.nullable()).optional(),
  })
  .strict();

export type ResolveBulkRequest = z.infer<typeof resolveBulkRequestSchema>;

export type ResolveManyRow =
  | { operationId: string; status: "resolved"; state: string }
  | {
      operationId: string;
      status: "skipped";
      state: string;
      // The actor as audited ("user:…", "api-key:…") and as a person reads it ("demo-admin (API key)").
      resolvedBy: string | null;
      resolvedByLabel: string | null;
      resolvedVia: string | null;
      resolvedAt: string | null;
      detail: string;
    }
  | { operationId: string; status: "not-found" | "error"; detail: string };

export type ResolveManyResult = { resolved: number; skipped: number; notFound: number; failed: number; results: ResolveManyRow[] };

// Bulk resolve: each operation goes through resolveOperation on its own (the same rules and
// compare-and-set as a single resolve, one row lock at a time). One that someone else settled
// meanwhile is reported with who did it, never overwritten; another tenant's id is "not found".
export async function resolveMany(options: {
  db: Db;
  tenantId: string;
  operationIds: string[];
  input: ResolveRequest;
  actor: string;
  seenAttempts?: Record<string, number>;
  seenFlags?: Record<string, string | null>;
  concurrency?: number;
}): Promise<ResolveManyResult> {
  const ids = [...new Set(options.operationIds)];
  const results = new Array<ResolveManyRow>(ids.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < ids.length; i = next++) {
      results[i] = await resolveOne(options, ids[i] as string);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 4, ids.length) }, worker));
  // Each resolution above has committed on its own: a failure to describe the skipped ones must
  // not turn the whole answer into an error (or a 503 saying nothing was stored).
  await describeSkipped(options, results).catch((error: unknown) =>
    log().warn({ err: error instanceof Error ? error.message : String(error) }, "bulk resolve: could not say who settled the skipped operations"),
  );
  const count = (status: ResolveManyRow["status"]) => results.filter((r) => r.status === status).length;
  return { resolved: count("resolved"), skipped: count("skipped"), notFound: count("not-found"), failed: count("error"), results };
}

async function resolveOne(
  options: { db: Db; tenantId: string; input: ResolveRequest; actor: string; seenAttempts?: Record<string, number>; seenFlags?: Record<string, string | null> },
  operationId: string,
): Promise<ResolveManyRow> {
  try {
    const view = await resolveOperation({
      db: options.db,
      tenantId: options.tenantId,
      operationId,
      input: options.input,
      actor: options.actor,
      via: "operator",
      // Own keys only: an id such as "__proto__" read Object.prototype off the map (a 500 from the SQL).
      seenAttempts: options.seenAttempts && Object.hasOwn(options.seenAttempts, operationId) ? options.seenAttempts[operationId] : undefined,
      seenFlaggedAt: options.seenFlags && Object.hasOwn(options.seenFlags, operationId) ? options.seenFlags[operationId] : undefined,
    });
    return { operationId, status: "resolved", state: view.state };
  } catch (error) {
    if (error instanceof ProblemError && error.code === "operation-not-found") {
      return { operationId, status: "not-found", detail: "No such operation in this tenant." };
    }
    if (error instanceof ProblemError && error.code === "invalid-state") {
      const state = typeof error.extras.state === "string" ? error.extras.state : "unknown";
      return { operationId, status: "skipped", state, resolvedBy: null, resolvedByLabel: null, resolvedVia: null, resolvedAt: null, detail: error.message };
    }
    log().error({ operationId, err: error instanceof Error ? error.message : String(error) }, "bulk resolve: one operation failed");
    return { operationId, status: "error", detail: "Could not resolve this one; try again." };
  }
}

// One query for every skipped row: who settled it, how and when (from its latest resolution).
async function describeSkipped(options: { db: Db; tenantId: string }, results: ResolveManyRow[]): Promise<void> {
  const skipped = results.filter((r) => r.status === "skipped");
  if (!skipped.length) return;
  const rows = await options.db.operation.findMany({
    where: { tenantId: options.tenantId, id: { in: skipped.map((r) => r.operationId) } },
    select: { id: true, state: true, resolution: true },
  });
  const byId = new Map(rows.map((r) => [r.id, r]));
  const keyIds = rows.flatMap((r) => {
    const by = (r.resolution as { by?: unknown } | null)?.by;
    return typeof by === "string" && by.startsWith("api-key:") ? [by.slice("api-key:".length)] : [];
  });
  const keys = keyIds.length
    ? await options.db.apiKey.findMany({ where: { tenantId: options.tenantId, id: { in: keyIds } }, select: { id: true, principal: true } })
    : [];
  const label = (by: string) => {
    const key = by.startsWith("api-key:") ? keys.find((k) => `api-key:${k.id}` === by) : undefined;
    return key ? `${key.principal} (API key)` : by.replace(/^user:/, "");
  };
  for (const row of skipped) {
    const op = byId.get(row.operationId);
    const latest = op?.resolution as { outcome?: string; by?: string; via?: string; at?: string } | null | undefined;
    row.state = op?.state ?? row.state;
    // An old resolution ("retry", then an agent finished it) did not put it in this state: do not name it.
    const resolution = latest && (latest.outcome === row.state || (latest.outcome === "retry" && row.state === "pending")) ? latest : null;
    row.resolvedBy = resolution?.by ?? null;
    row.resolvedByLabel = resolution?.by ? label(resolution.by) : null;
    row.resolvedVia = resolution?.via ?? null;
    row.resolvedAt = resolution?.at ? new Date(resolution.at).toISOString() : null;
    // Still unknown (or processing): refused because it changed since the person looked (another
    // attempt, a flag raised) or cannot be retried; the refusal's own reason says which.
    const stillOpen = row.state === "unknown" || row.state === "processing";
    row.detail = resolution?.by
      ? `Already resolved (${row.state}) by ${label(resolution.by)}${resolution.via && resolution.via !== "operator" ? ` via ${resolution.via}` : ""}.`
      : stillOpen
        ? row.detail
        : `Not resolvable any more: it is ${row.state} now.`;
  }
}
