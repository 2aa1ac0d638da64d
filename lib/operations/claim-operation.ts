import type { Db } from "@/lib/db";
import type { AuthenticatedKey } from "@/lib/api-keys/authenticate-api-key";
import { sha256Hex } from "@/lib/crypto/digest";
import { hotQuery, type HotStatement } from "@/lib/db/hot-sql";
import { ProblemError } from "@/lib/http/problem";
import type { LogFields } from "@/lib/http/request-context";
import { metrics } from "@/lib/metrics/registry";
import { canonicalJson, type Json } from "@/lib/operations/canonical-json";
import { returnClaimCandidate, takeClaimCandidate } from "@/lib/operations/claim-candidate";
import { diffPaths } from "@/lib/operations/diff-paths";
import { fingerprintOfCanonical } from "@/lib/operations/fingerprint";
import { recordMismatch } from "@/lib/operations/record-mismatch";
import type { ClaimCreated, ClaimRequest } from "@/lib/operations/operation-schemas";
import { iso, replayText, type SqlOperation } from "@/lib/operations/operation-view";

export type ClaimOutcome =
  | { kind: "granted"; how: "created" | "attempt" | "takeover"; body: ClaimCreated }
  | { kind: "awaiting-approval"; body: Record<string, unknown>; retryAfterSeconds: number }
  | { kind: "replay"; text: string; operationId: string };

type SqlClaim = {
  code: string;
  op?: SqlOperation;
  attempt?: { number: number; fencingToken: string; leaseExpiresAt: string };
  approval?: { id: string; expiresAt: string };
  storedArgs?: Json;
  retryAfterMs?: number;
  becameUnknown?: boolean;
  // This claim wrote the approval's expiry (undecided past expiresAt, or a yes past its use-by).
  expiredNow?: boolean;
};

const CLAIM_SQL: HotStatement = {
  name: "tollgate_claim",
  text: "SELECT tollgate_claim($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::jsonb, $8::text, $9::text, $10::text, $11::text, $12::text) AS r",
};

// A 422 names at most this many differing paths.
const MISMATCH_PATHS = 50;

// How long an agent waiting for a person should wait between polls.
const APPROVAL_POLL_SECONDS = 30;

// Claims (tenant, principal, tool, Idempotency-Key). The decision is made by one SQL
// function in one round trip (see the migration "invariants_and_protocol"): that is both the
// correctness argument (the row lock serializes every claimant) and the performance budget.
export async function claimOperation(options: {
  db: Db;
  key: AuthenticatedKey;
  idempotencyKey: string;
  // SHA-256 (hex) of the key when the caller already has it (the route logs a prefix of it).
  keyDigest?: string;
  input: ClaimRequest;
  secret: string;
  // The request's log line: which operation and attempt the answer is about, refusals
  // (409, 422, 429) included. The route already logged the key digest and tool it sent.
  annotate?: (fields: LogFields) => void;
}): Promise<ClaimOutcome> {
  const { db, key, input } = options;
  if (key.tools.length > 0 && !key.tools.includes(input.tool)) {
    throw new ProblemError("forbidden", `This API key may not use the tool "${input.tool}".`);
  }
  const args = input.args;
  const started = performance.now();
  const canonicalArgs = canonicalJson(args);
  const candidate = takeClaimCandidate(key.tenantId, options.secret);
  const rows = await hotQuery<{ r: SqlClaim }>(db, CLAIM_SQL, [
    key.tenantId, key.id, key.principal, input.tool, options.keyDigest ?? sha256Hex(options.idempotencyKey), fingerprintOfCanonical(input.tool, canonicalArgs), canonicalArgs,
    input.workflowId ?? null, input.traceId ?? null, candidate.operationId, candidate.downstreamKey,
    `api-key:${key.id}`,
  ]);
  const r = rows[0]?.r;
  if (!r) throw new Error("tollgate_claim returned nothing");
  returnClaimCandidate(candidate, r.op?.operationId);
  // The workflow id the request sent, else the one the operation was claimed with (a retry may omit it).
  if (r.op) options.annotate?.({ operationId: r.op.operationId, attempt: r.attempt?.number ?? r.op.attempts, workflowId: input.workflowId ?? r.op.workflowId ?? undefined });
  metrics().claimSeconds.observe((performance.now() - started) / 1000);
  metrics().claims.inc({ result: r.code });
  // One path more than the 422 lists tells the trace whether others differ beyond them.
  const differing = r.code === "idempotency-key-reused" ? diffPaths(r.storedArgs ?? null, args, "args", MISMATCH_PATHS + 1) : [];
  const mismatch = differing.slice(0, MISMATCH_PATHS);
  if (r.op && mismatch.length > 0) await recordMismatch(db, key.tenantId, r.op.operationId, mismatch, differing.length > MISMATCH_PATHS);
  return interpret(r, mismatch);
}

function interpret(r: SqlClaim, mismatch: string[]): ClaimOutcome {
  const op = r.op;
  switch (r.code) {
    case "created":
    case "attempt":
    case "takeover": {
      if (!op || !r.attempt) break;
      if (r.code === "takeover") metrics().takeovers.inc();
      return {
        kind: "granted",
        how: r.code,
        body: {
          operationId: op.operationId,
          state: "processing",
          tool: op.tool,
          attempt: { number: r.attempt.number, fencingToken: r.attempt.fencingToken, leaseExpiresAt: iso(r.attempt.leaseExpiresAt) },
          downstreamKey: op.downstreamKey,
          resultExpiresAt: iso(op.resultExpiresAt),
        },
      };
    }
    case "awaiting-approval":
      if (!op || !r.approval) break;
      return {
        kind: "awaiting-approval",
        retryAfterSeconds: APPROVAL_POLL_SECONDS,
        body: {
          operationId: op.operationId,
          state: "awaiting_approval",
          tool: op.tool,
          approval: { id: r.approval.id, expiresAt: iso(r.approval.expiresAt) },
          downstreamKey: op.downstreamKey,
          resultExpiresAt: null,
        },
      };
    case "replay":
      if (!op) break;
      metrics().replays.inc();
      return { kind: "replay", text: replayText(op), operationId: op.operationId };
    case "unauthorized":
      throw new ProblemError("unauthorized", "The API key is unknown or revoked.", { headers: { "www-authenticate": 'Bearer realm="tollgate"' } });
    case "tool-not-found":
      throw new ProblemError("tool-not-found", "No tool of that name is registered for this tenant.");
    case "idempotency-key-reused":
      throw new ProblemError(
        "idempotency-key-reused",
        "This Idempotency-Key was first used with different arguments. Use a new key for a new intent, or resend the original arguments.",
        { extras: { operationId: op?.operationId, mismatch } },
      );
    case "approval-rejected":
      // Counted only by the claim that wrote the expiry: later claims of the rejected operation are answers, not expiries.
      if (r.expiredNow) metrics().approvalExpiries.inc();
      throw new ProblemError("approval-rejected", "A person rejected the approval for this operation, or it expired (undecided, or approved but not acted on before its use-by); it will not run.", {
        extras: { operationId: op?.operationId },
      });
    case "approval-mismatch":
      throw new ProblemError("approval-mismatch", "This operation's approval is not in force for these arguments; it will not run.", {
        extras: { operationId: op?.operationId },
      });
    case "retry-backoff":
      throw new ProblemError("retry-backoff", "The previous attempt failed and asked for a retry; the backoff is not over yet.", {
        extras: { operationId: op?.operationId, notBefore: iso(op?.notBefore ?? null) },
        headers: { "retry-after": retryAfter(r.retryAfterMs) },
      });
    case "operation-in-progress":
      throw new ProblemError("operation-in-progress", "Another attempt holds the lease on this operation. Retry after the lease expires.", {
        extras: { operationId: op?.operationId, leaseExpiresAt: iso(op?.leaseExpiresAt ?? null) },
        headers: { "retry-after": retryAfter(r.retryAfterMs) },
      });
    case "outcome-unknown":
      if (r.becameUnknown) metrics().unknowns.inc({ cause: "lease-expired" });
      throw new ProblemError(
        "outcome-unknown",
        "The outcome of this operation is unknown: the effect may have happened. Do not retry; it needs reconciliation by evidence or an operator.",
        { extras: { operationId: op?.operationId } },
      );
  }
  throw new Error(`tollgate_claim returned an unexpected answer: ${r.code}`);
}

// Whole seconds, rounded up, never less than 1.
export function retryAfter(ms: number | undefined): string {
  return String(Math.max(1, Math.ceil((ms ?? 1000) / 1000)));
}
