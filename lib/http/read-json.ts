import { ProblemError } from "@/lib/http/problem";
import { formatPath } from "@/lib/http/format-path";
import { describeJsonSyntaxError } from "@/lib/http/json-syntax-error";
import { jsonNestsDeeperThan, MAX_JSON_DEPTH, unstorableText as unstorable } from "@/lib/http/json-limits";
import { assertJsonMediaType, readBody } from "@/lib/http/read-body";

export { KiB } from "@/lib/http/read-body";

// Strict: JSON exchanged between systems must be UTF-8 (RFC 8259), and a body with bytes that are
// not is refused, never repaired. Replacing them with U+FFFD made two different bodies one text:
// a claim whose args held byte 0xFF and a retry under the same key holding 0xFE had the same
// fingerprint, so the second replayed the first instead of getting its 422.
const decoder = new TextDecoder("utf-8", { fatal: true });

// Reads a JSON body with a hard byte limit (see readBody) and parses it.
export async function readJson(req: Request, options: { maxBytes: number }): Promise<unknown> {
  assertJsonMediaType(req);
  const bytes = await readBody(req, options.maxBytes);
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new ProblemError("invalid-json", "The body is not valid UTF-8: JSON must be sent as UTF-8.");
  }
  if (text.trim() === "") throw new ProblemError("invalid-json", "The request body is empty; a JSON object is expected.");
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    throw new ProblemError("invalid-json", `The body is not valid JSON: ${describeJsonSyntaxError(error)}.`);
  }
  if (jsonNestsDeeperThan(text, MAX_JSON_DEPTH)) {
    const message = `nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`;
    throw new ProblemError("invalid-request", `The body ${message}.`, { extras: { errors: [{ path: "body", message }] } });
  }
  // Strict decoding never yields a lone surrogate and JSON forbids a raw U+0000 inside strings,
  // so only a \u escape can smuggle one in: most bodies skip the walk.
  if (text.includes("\\u")) assertStorableText(value);
  return value;
}

// PostgreSQL text and jsonb cannot hold U+0000 or half of a surrogate pair (unstorable). Refusing
// them here, for every body, turns what would be a database error (a 500) into a clear 400.
function assertStorableText(value: unknown, path: (string | number)[] = []): void {
  if (typeof value === "string") {
    if (unstorable.test(value)) throw unstorableAt(path);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => assertStorableText(item, [...path, i]));
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (unstorable.test(key)) throw unstorableAt([...path, key]);
      assertStorableText(item, [...path, key]);
    }
  }
}

function unstorableAt(path: (string | number)[]): ProblemError {
  const where = formatPath(path) || "body";
  const message = "contains U+0000 or an unpaired surrogate, which cannot be stored";
  return new ProblemError("invalid-request", `${where} ${message}.`, { extras: { errors: [{ path: where, message }] } });
}
