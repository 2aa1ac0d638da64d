// Small response helpers so handlers read as "parse → authorize → one lib call → respond".
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return jsonText(JSON.stringify(body), status, headers);
}

// For bodies that must be byte-for-byte stable (replays), pass the exact text.
export function jsonText(text: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(text, { status, headers: answerHeaders(text, "application/json", headers) });
}

// Next.js gzips every answer whose client accepts gzip (fetch and most HTTP clients say so), and
// it strips a route's Content-Length, so the compressor cannot apply its own 1 KiB threshold.
// For an answer of a few hundred bytes that is a zlib stream per request (measured: 13% of a
// liveness request's throughput) to save a few bytes. Answers under 1,024 characters therefore
// carry `no-transform`, which the compressor honours (and so must proxies); larger ones (lists,
// the OpenAPI document, exports) are still compressed.
const COMPRESS_FROM_CHARS = 1024;

export function answerHeaders(text: string, contentType: string, headers: Record<string, string> = {}): Record<string, string> {
  const all: Record<string, string> = { "content-type": contentType, ...headers };
  if (text.length < COMPRESS_FROM_CHARS) {
    const cacheControl = all["cache-control"];
    all["cache-control"] = cacheControl ? `${cacheControl}, no-transform` : "no-transform";
  }
  return all;
}
