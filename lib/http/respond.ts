// Small response helpers so handlers read as "parse → authorize → one lib call → respond".
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return jsonText(JSON.stringify(body), status, headers);
}

// For bodies that must be byte-for-byte stable (replays), pass the exact text.
export function jsonText(text: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(text, { status, headers: { "content-type": "application/json", ...headers } });
}
