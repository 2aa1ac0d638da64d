import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import { logDigest, sha256Hex } from "@/lib/crypto/digest";
import { classifyCallError, classifyToolResult, type UpstreamVerdict } from "@/lib/mcp-gateway/classify-upstream-outcome";
import type { ArgumentCheck } from "@/lib/mcp-gateway/guard-tool-list";
import { holdLease } from "@/lib/mcp-gateway/hold-lease";
import { KEY_ARGUMENT, META } from "@/lib/mcp-gateway/meta-keys";
import { gatewayErrorResult, refusalResult } from "@/lib/mcp-gateway/refusal-result";
import { cleanedJson, replayedResult, resultToStore, storableError, unkeptResult } from "@/lib/mcp-gateway/stored-result";
import type { TollgateClient, TollgateReply } from "@/lib/mcp-gateway/tollgate-client";
import { claimCreatedSchema, idempotencyKeyPattern, replaySchema } from "@/lib/operations/operation-schemas";

export type UpstreamCall = (
  params: { name: string; arguments: Record<string, unknown>; _meta: Record<string, unknown> },
  onProgress?: (progress: Progress) => void,
) => Promise<CallToolResult>;

export type GuardedCallOptions = {
  tollgate: TollgateClient;
  callUpstream: UpstreamCall;
  log: Logger;
  // Pauses between tries of a complete Tollgate did not answer (it is idempotent: the same
  // complete repeated changes nothing, and the fencing token makes a late one safe); the last
  // pause repeats until Tollgate answers or completeRetryLimitMs has passed.
  completeRetryDelaysMs: number[];
  completeRetryLimitMs: number;
};

export type GuardedCall = {
  name: string;
  tollgateTool: string;
  args: Record<string, unknown>;
  meta: Record<string, unknown> | undefined;
  keyInArguments: boolean;
  upstreamHasKey: boolean;
  checkArguments: ArgumentCheck;
  // The host asked for progress: the upstream tool's progress notifications are passed on.
  onProgress?: (progress: Progress) => void;
};

// One tool call through Tollgate: claim under the caller's key; only a granted claim (201) calls
// the upstream tool, under a held lease; its result is completed and kept for every repeat.
// Anything else (a replay, a conflict, an approval to wait for) answers without calling it.
export async function callGuardedTool(options: GuardedCallOptions, call: GuardedCall): Promise<CallToolResult> {
  const fromMeta = call.meta?.[META.idempotencyKey];
  const fromArgs = call.keyInArguments ? call.args[KEY_ARGUMENT] : undefined;
  const key = typeof fromMeta === "string" ? fromMeta : fromArgs;
  if (typeof key !== "string" || key === "") {
    return gatewayErrorResult(
      call.keyInArguments
        ? `This tool needs an "${KEY_ARGUMENT}" argument: a new unique value for a new action, the same value when retrying it. Nothing was done.`
        : `This call carries no idempotency key (_meta "${META.idempotencyKey}"). Nothing was done.`,
    );
  }
  // Checked here, not left to Tollgate: fetch trims a header's surrounding whitespace (so "K " and
  // "K" would be one key) and throws on characters outside Latin-1 (which read as "Tollgate
  // unreachable, repeat later", forever). MCP review.
  if (!idempotencyKeyPattern.test(key)) {
    return gatewayErrorResult(
      "The idempotency key must be 1 to 255 printable ASCII characters (0x21-0x7E), without spaces. Nothing was done; use a key of that form, the same one on every retry of this action.",
    );
  }
  const args = { ...call.args };
  if (call.keyInArguments && !call.upstreamHasKey) delete args[KEY_ARGUMENT];
  const invalid = call.checkArguments(args);
  if (invalid) return gatewayErrorResult(`The arguments do not fit the tool's input schema (${invalid}). Nothing was done.`);
  // An upstream that takes an idempotencyKey argument itself gets the raw key; Tollgate stores a
  // claim's args (and shows them on the trace), so it gets a digest in its place.
  const claimedArgs = call.upstreamHasKey && typeof args[KEY_ARGUMENT] === "string" ? { ...args, [KEY_ARGUMENT]: `sha256:${sha256Hex(args[KEY_ARGUMENT])}` } : args;
  const context = { tool: call.tollgateTool, keyDigest: logDigest(key) };

  let claim: TollgateReply;
  try {
    claim = await options.tollgate.claim({
      idempotencyKey: key,
      tool: call.tollgateTool,
      args: claimedArgs,
      workflowId: stringMeta(call.meta, META.workflowId),
      traceId: stringMeta(call.meta, META.traceId),
    });
  } catch (error) {
    options.log.error({ ...context, err: (error as Error).message }, "mcp gateway: Tollgate unreachable; the tool was not called");
    return gatewayErrorResult("Tollgate could not be reached, so the tool was not called and nothing was done. Repeat the same call with the same idempotency key later.");
  }
  if (claim.status === 200) {
    const replay = replaySchema.safeParse(claim.body);
    if (replay.success) {
      options.log.info({ ...context, operationId: replay.data.operationId, state: replay.data.state }, "mcp gateway: replayed");
      return replayedResult(replay.data);
    }
    return gatewayErrorResult("This action already completed, but its stored result could not be read; it was not carried out again. Do not retry it with a new key.");
  }
  if (claim.status !== 201) {
    options.log.info({ ...context, status: claim.status, code: claim.body.code }, "mcp gateway: claim not granted; the tool was not called");
    return refusalResult(claim);
  }
  const granted = claimCreatedSchema.parse(claim.body);
  const attempt = { operationId: granted.operationId, attempt: granted.attempt.number };
  options.log.info({ ...context, ...attempt }, "mcp gateway: claim granted; calling the tool");

  const lease = holdLease({
    tollgate: options.tollgate,
    operationId: granted.operationId,
    fencingToken: granted.attempt.fencingToken,
    leaseExpiresAt: granted.attempt.leaseExpiresAt,
    tollgateNow: Date.parse(claim.headers.get("date") ?? "") || Date.now(),
    log: options.log,
  });
  let verdict: UpstreamVerdict;
  try {
    const result = await options.callUpstream(
      { name: call.name, arguments: args, _meta: { [META.downstreamKey]: granted.downstreamKey, [META.operation]: attempt } },
      call.onProgress,
    );
    verdict = classifyToolResult(result);
  } catch (error) {
    verdict = classifyCallError(error);
  }
  // Held until the outcome is recorded: a lease lapsing while the complete is retried would let a
  // repeat take the operation over (with takeover `deduplicated`) and run the tool again.
  const completed = await complete(options, granted.operationId, granted.attempt.fencingToken, verdict).finally(lease.stop);
  options.log.info({ ...context, ...attempt, outcome: verdict.outcome, completed }, "mcp gateway: tool call completed");
  return answer(verdict, { ...attempt, replayed: false, completed });
}

// What a complete carries of the tool's answer, from all of it to a note in its place: each
// refusal of the body by Tollgate moves one step down, and a refusal of the last is final.
const resultKeeping = ["whole", "cleaned", "note"] as const;
type ResultKeeping = (typeof resultKeeping)[number];

async function complete(options: GuardedCallOptions, operationId: string, fencingToken: string, verdict: UpstreamVerdict): Promise<string> {
  let keeping: ResultKeeping = "whole";
  let body = completeBody(fencingToken, verdict, keeping);
  const giveUpAt = Date.now() + options.completeRetryLimitMs;
  for (let tryIndex = 0; ; tryIndex += 1) {
    try {
      const reply = await options.tollgate.complete(operationId, body);
      if (reply.status === 200) return "recorded";
      const next: CompleteBody | null = reply.status === 400 || reply.status === 413 ? lessOfTheResult(fencingToken, verdict, keeping, body, reply.status) : null;
      if (next) {
        // Tollgate refused what the tool answered (text PostgreSQL cannot hold, such as U+0000,
        // or a body over its limit). The outcome is what matters: record it at once with less of
        // the result. Leaving it unrecorded made the operation unknown, and with takeover
        // `deduplicated` a repeat ran the tool a second time (MCP review).
        options.log.warn({ operationId, status: reply.status, code: reply.body.code, keeping: next.keeping }, "mcp gateway: Tollgate refused the result; recording the outcome with less of it");
        keeping = next.keeping;
        body = next.body;
        tryIndex -= 1;
        continue;
      }
      if (reply.status < 500) {
        // lease-lost (another attempt took over) / already-resolved (a webhook or an operator got
        // there first): Tollgate's record stands; the caller still gets what the tool answered.
        options.log.warn({ operationId, status: reply.status, code: reply.body.code }, "mcp gateway: complete refused");
        return typeof reply.body.code === "string" ? reply.body.code : `http-${reply.status}`;
      }
    } catch (error) {
      options.log.warn({ operationId, err: (error as Error).message }, "mcp gateway: complete failed");
    }
    // Tollgate restarting or unreachable. Tollgate takes a late complete until another attempt
    // takes over, so keep trying; past the limit the lease is let go and the tool's takeover
    // policy decides (`never`: unknown, for an operator), as for a crashed executor.
    if (Date.now() >= giveUpAt) {
      options.log.error({ operationId }, "mcp gateway: could not record the outcome; letting the lease go");
      return "not-recorded";
    }
    const delays = options.completeRetryDelaysMs;
    await new Promise((resolve) => setTimeout(resolve, delays[Math.min(tryIndex, delays.length - 1)] ?? 1000));
  }
}

// The next, smaller body after a refusal, or null when there is none left. A body too large
// (413) gains nothing from cleaning; a cleaning that changes nothing is skipped.
type CompleteBody = { keeping: ResultKeeping; body: Record<string, unknown> };

function lessOfTheResult(fencingToken: string, verdict: UpstreamVerdict, keeping: ResultKeeping, refused: Record<string, unknown>, status: number): CompleteBody | null {
  for (const next of resultKeeping.slice(resultKeeping.indexOf(keeping) + 1)) {
    if (next === "cleaned" && status === 413) continue;
    const body = completeBody(fencingToken, verdict, next);
    if (JSON.stringify(body) !== JSON.stringify(refused)) return { keeping: next, body };
  }
  return null;
}

// What the complete sends. "cleaned": the result and error with the text PostgreSQL refuses
// replaced (the error also cut); "note": a note of how the action ended in place of the result.
function completeBody(fencingToken: string, verdict: UpstreamVerdict, keeping: ResultKeeping): Record<string, unknown> {
  const body: Record<string, unknown> = { fencingToken, outcome: verdict.outcome };
  if (verdict.outcome !== "succeeded") body.error = keeping === "whole" ? verdict.error : storableError(verdict.error);
  if (verdict.outcome === "failed" && verdict.retryable) body.retryable = true;
  if (verdict.outcome !== "unknown" && verdict.result) {
    const stored = resultToStore(verdict.result, verdict.outcome);
    body.result = keeping === "whole" ? stored : keeping === "cleaned" ? cleanedJson(stored) : unkeptResult(verdict.outcome);
  }
  return body;
}

function answer(verdict: UpstreamVerdict, operation: Record<string, unknown>): CallToolResult {
  const meta = { [META.operation]: { ...operation, outcome: verdict.outcome } };
  if (verdict.outcome === "succeeded") return { ...verdict.result, _meta: { ...verdict.result._meta, ...meta } };
  const advice =
    verdict.outcome === "unknown"
      ? `The outcome of this action is unknown (${verdict.error.code}): it may have happened. Do not retry it, with this key or a new one; an operator will reconcile operation ${String(operation.operationId)}.`
      : verdict.retryable
        ? "The action failed and nothing was done; it may be retried with the same idempotency key after a pause."
        : "The action failed and nothing was done. Repeating this call with the same key returns this failure; a new attempt needs a new key.";
  const content = [...(verdict.result?.content ?? [{ type: "text" as const, text: verdict.error.message }]), { type: "text" as const, text: advice }];
  return { content, isError: true, _meta: meta };
}

function stringMeta(meta: Record<string, unknown> | undefined, key: string): string | undefined {
  const value = meta?.[key];
  return typeof value === "string" && value !== "" ? value : undefined;
}
