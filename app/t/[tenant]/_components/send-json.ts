// Calls a console route handler and reads its answer: the JSON body on success, or the
// problem+json's detail and per-field errors[] ({ path, message }) on failure.
export type FieldErrors = Record<string, string>;
export type Sent<T> = { ok: true; data: T } | { ok: false; status: number; detail: string; fields: FieldErrors };

export async function sendJson<T>(url: string, method: "POST" | "PUT" | "PATCH", body: unknown): Promise<Sent<T>> {
  let res: Response;
  try {
    res = await fetch(url, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  } catch {
    return { ok: false, status: 0, detail: "The server could not be reached. Nothing was changed; try again.", fields: {} };
  }
  const parsed = (await res.json().catch(() => null)) as (T & { detail?: string; errors?: { path: string; message: string }[] }) | null;
  if (res.ok && parsed) return { ok: true, data: parsed };
  const fields: FieldErrors = {};
  for (const e of parsed?.errors ?? []) fields[e.path] ??= e.message;
  const detail = parsed?.detail ?? `The server answered ${res.status}.`;
  return { ok: false, status: res.status, detail: res.status === 401 ? "Your session has ended. Sign in again." : detail, fields };
}

// The line above a form after a refused change: the field messages speak for themselves, so
// only point at them; otherwise the server's detail. `outcome` says what did not happen.
export function problemLine(res: { detail: string; fields: FieldErrors }, outcome: string): string {
  const n = Object.keys(res.fields).length;
  if (n) return `${n === 1 ? "One field needs" : `${n} fields need`} a change. ${outcome}`;
  return `${res.detail.replace(/\.?$/, ".")} ${outcome}`;
}
