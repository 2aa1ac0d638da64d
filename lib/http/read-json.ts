import { ProblemError } from "@/lib/http/problem";
import { formatPath } from "@/lib/http/format-path";

export const KiB = 1024;

// Reads a JSON body with a hard byte limit, counting bytes as they stream in so an
// oversized body is refused without buffering it whole.
export async function readJson(req: Request, options: { maxBytes: number }): Promise<unknown> {
  const contentType = req.headers.get("content-type") ?? "";
  const mediaType = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  if (mediaType !== "application/json" && !/^application\/[a-z0-9.+-]*\+json$/.test(mediaType)) {
    throw new ProblemError("unsupported-media-type", `Expected application/json, got "${mediaType || "nothing"}".`);
  }
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > options.maxBytes) {
    throw tooLarge(options.maxBytes);
  }
  const text = await readLimitedText(req, options.maxBytes);
  if (text.trim() === "") throw new ProblemError("invalid-json", "The request body is empty; a JSON object is expected.");
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    throw new ProblemError("invalid-json", `The body is not valid JSON: ${(error as Error).message}`);
  }
  assertStorableText(value);
  return value;
}

// PostgreSQL text and jsonb cannot hold U+0000 or half of a surrogate pair. Refusing them here,
// for every body, turns what would be a database error (a 500) into a clear 400.
const unstorable = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

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

async function readLimitedText(req: Request, maxBytes: number): Promise<string> {
  if (!req.body) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return new TextDecoder("utf-8", { fatal: false }).decode(Buffer.concat(chunks));
}

function tooLarge(maxBytes: number): ProblemError {
  return new ProblemError("payload-too-large", `The body exceeds ${maxBytes} bytes.`, { extras: { maxBytes } });
}
