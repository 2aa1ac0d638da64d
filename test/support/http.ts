// A tiny HTTP client for tests: every call returns status, headers, raw text and parsed JSON.
export type Reply = { status: number; headers: Headers; text: string; body: any }; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function call(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; rawBody?: string | Uint8Array; headers?: Record<string, string>; idempotencyKey?: string } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey;
  let body: string | Uint8Array | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body: body as BodyInit | undefined });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

// JSON as Python's json.dumps writes it by default: every character beyond ASCII as a \uXXXX escape
// (6 bytes where UTF-8 takes 2 to 4), the largest a valid body of given text limits can be.
export const asciiOnlyJson = (value: unknown): string =>
  JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

export function claim(baseUrl: string, key: string, idempotencyKey: string, body: unknown): Promise<Reply> {
  return call(baseUrl, "POST", "/api/v1/operations", { key, idempotencyKey, body });
}
