import { ProblemError } from "@/lib/http/problem";

export const KiB = 1024;
export const MiB = 1024 * KiB;

// JSON bodies only (application/json or application/*+json), and not compressed: anything else
// is 415 (RFC 9110 §15.5.16). A gzip body was read as text and refused as "not valid UTF-8", a
// 400 that pointed at the wrong thing (API review).
export function assertJsonMediaType(req: Request): void {
  const encoding = req.headers.get("content-encoding");
  if (encoding !== null && encoding.trim().toLowerCase() !== "identity" && encoding.trim() !== "") {
    throw new ProblemError("unsupported-media-type", `Content-Encoding "${encoding.slice(0, 40)}" is not accepted: send the JSON body uncompressed.`);
  }
  const mediaType = (req.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (mediaType !== "application/json" && !/^application\/[a-z0-9.+-]*\+json$/.test(mediaType)) {
    throw new ProblemError("unsupported-media-type", `Expected application/json, got "${mediaType || "nothing"}".`);
  }
}

// The body's bytes exactly as sent, refused past `maxBytes` without buffering an oversized body
// whole. With a Content-Length the HTTP parser delivers exactly that many bytes, so the body is
// read in one go (much cheaper than pulling the web stream chunk by chunk: it is on every
// claim and complete); a chunked body is counted as it streams in.
export async function readBody(req: Request, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  if (!req.body) return Buffer.alloc(0);
  if (Number.isFinite(declared)) return Buffer.from(await req.arrayBuffer());
  const { bytes, overflowed } = await readStreamUpTo(req.body, maxBytes);
  if (overflowed) throw tooLarge(maxBytes);
  return bytes;
}

// Reads a byte stream until it ends or would pass `maxBytes`. Past the limit it cancels the
// stream and returns its first `maxBytes` bytes, with `overflowed` set: a request body is then
// refused (413), a probe's or a receiver's answer kept as a prefix (a chunk can be 64 KiB, so
// the part of the crossing chunk that fits is kept: without it a 5 KiB error page left nothing).
export async function readStreamUpTo(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<{ bytes: Buffer; overflowed: boolean }> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      chunks.push(value.subarray(0, value.byteLength - (total - maxBytes)));
      await reader.cancel().catch(() => undefined);
      return { bytes: Buffer.concat(chunks), overflowed: true };
    }
    chunks.push(value);
  }
  return { bytes: Buffer.concat(chunks), overflowed: false };
}

// The start of an answer from someone else's server (a receiver's, a provider's), as text to
// store: at most `maxBytes`, and never a NUL, which PostgreSQL's text type refuses (one NUL in an
// error page would make the statement recording the delivery or probe fail).
export async function readTextUpTo(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<string> {
  if (!body) return "";
  const { bytes } = await readStreamUpTo(body, maxBytes);
  return bytes.toString("utf8").replaceAll("\0", "\uFFFD");
}

// The refused body is left unread on the connection, so the connection cannot carry another
// request: `Connection: close` tells the client so, instead of letting it reuse a socket the
// server is about to drop (seen in CI: the next request on it failed with ECONNRESET).
function tooLarge(maxBytes: number): ProblemError {
  return new ProblemError("payload-too-large", `The body exceeds ${maxBytes} bytes.`, { extras: { maxBytes }, headers: { connection: "close" } });
}
