import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { META } from "@/lib/mcp-gateway/meta-keys";
import { cutText } from "@/lib/console/storable-text";
import { unstorableText } from "@/lib/http/json-limits";

// The one definition of what PostgreSQL's text refuses, every occurrence of it.
const unstorableEverywhere = new RegExp(unstorableText.source, "g");

// A complete's body may be 256 KiB (AGENT-API.md); leave room for the rest of the body.
export const MAX_STORED_RESULT_BYTES = 240 * 1024;

// What Tollgate keeps of a tool's result, for replays: the result itself, or, when it is too
// large to keep, a note saying how the action ended (the first caller still gets all of it).
export function resultToStore(result: CallToolResult, outcome: "succeeded" | "failed"): { statusCode: number; body: unknown } {
  const { _meta: _ignored, ...kept } = result;
  const bytes = Buffer.byteLength(JSON.stringify(kept));
  if (bytes <= MAX_STORED_RESULT_BYTES) return { statusCode: 200, body: kept };
  return unkeptResult(outcome, `Its result (${bytes} bytes) was too large for Tollgate to keep`);
}

// The note kept in place of a result Tollgate cannot store (too large, or refused by it).
export function unkeptResult(outcome: "succeeded" | "failed", why = "Tollgate could not keep its result"): { statusCode: number; body: unknown } {
  const ended = outcome === "succeeded" ? "succeeded" : "failed, and nothing was done";
  return {
    statusCode: 200,
    body: {
      content: [{ type: "text", text: `The action ${ended}. ${why}, so a repeat of this call cannot show it.` }],
      isError: outcome !== "succeeded",
    },
  };
}

// A JSON value with every text PostgreSQL refuses (U+0000, half a surrogate pair) replaced by
// U+FFFD, in keys and strings alike: what a result that differs only there can still be kept as.
// Values come from JSON.parse (the tool's answer), so there are no cycles; depth is bounded by
// Tollgate's own limit, which a deeper result fails anyway.
export function cleanedJson(value: unknown): unknown {
  if (typeof value === "string") return value.replace(unstorableEverywhere, "\uFFFD");
  if (Array.isArray(value)) return value.map(cleanedJson);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replace(unstorableEverywhere, "\uFFFD"), cleanedJson(v)]));
  }
  return value;
}

// An error as a complete may always carry it: U+0000 and unpaired surrogates (which PostgreSQL
// refuses in text) replaced, the message cut to 1,000 characters.
export function storableError(error: { code: string; message: string }): { code: string; message: string } {
  const clean = (text: string, max: number) => cutText(text.replace(unstorableEverywhere, "\uFFFD"), max);
  return { code: clean(error.code, 100), message: clean(error.message, 1000) };
}

type Replay = { operationId: string; state: "succeeded" | "failed"; result: { body: unknown } | null; error: { code: string; message: string } | null };

// A replay as the agent sees it: the stored tool result when there is one (the gateway stored
// it), otherwise words for what Tollgate knows (an operator or a webhook settled it).
export function replayedResult(replay: Replay): CallToolResult {
  const meta = { [META.operation]: { operationId: replay.operationId, state: replay.state, replayed: true } };
  const body = replay.result?.body;
  if (isCallToolResult(body)) return { ...body, _meta: meta };
  if (replay.state === "succeeded") {
    const detail = body === undefined || body === null ? "" : ` Stored result: ${JSON.stringify(body).slice(0, 2000)}`;
    return { content: [{ type: "text", text: `This action already succeeded (operation ${replay.operationId}); it was not carried out again.${detail}` }], _meta: meta };
  }
  const why = replay.error ? ` (${replay.error.code}: ${replay.error.message})` : "";
  return {
    content: [{ type: "text", text: `This action already failed${why} (operation ${replay.operationId}); it was not carried out again. Use a new idempotency key to try a new action.` }],
    isError: true,
    _meta: meta,
  };
}

function isCallToolResult(value: unknown): value is CallToolResult {
  return typeof value === "object" && value !== null && Array.isArray((value as { content?: unknown }).content);
}
