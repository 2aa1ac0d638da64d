import { ProblemError } from "@/lib/http/problem";

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
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ProblemError("invalid-json", `The body is not valid JSON: ${(error as Error).message}`);
  }
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
