import { ProblemError } from "@/lib/http/problem";

export const MiB = 1024 * 1024;

// The body exactly as sent (signatures are over these bytes), refused past `maxBytes` as it
// streams in, without buffering an oversized body whole. JSON media types only.
export async function readRawBody(req: Request, maxBytes: number): Promise<Buffer> {
  const mediaType = (req.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (mediaType !== "application/json" && !/^application\/[a-z0-9.+-]*\+json$/.test(mediaType)) {
    throw new ProblemError("unsupported-media-type", `Expected application/json, got "${mediaType || "nothing"}".`);
  }
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  if (!req.body) return Buffer.alloc(0);
  // With a Content-Length the HTTP parser delivers exactly that many bytes, so the body can be
  // read in one go (much cheaper than pulling the web stream chunk by chunk); a chunked body
  // is counted as it streams in.
  if (Number.isFinite(declared)) return Buffer.from(await req.arrayBuffer());
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
  return Buffer.concat(chunks);
}

function tooLarge(maxBytes: number): ProblemError {
  return new ProblemError("payload-too-large", `The body exceeds ${maxBytes} bytes.`, { extras: { maxBytes } });
}
