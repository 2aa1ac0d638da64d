import { CONSOLE_ANSWER_WITHIN_MS, mayHaveBeenSaved, noAnswer } from "@/lib/http/may-have-been-saved";

// Calls a console route handler and reads its answer: the JSON body on success, or the
// problem+json's detail and per-field errors[] ({ path, message }) on failure.
export type FieldErrors = Record<string, string>;
// inDoubt: the change may have been saved although nothing confirmed it. The request may have
// reached the server (the connection failed, or a 5xx other than a 503 saying nothing was
// stored): a person must look at what is stored, not be told "Nothing was changed".
// code: the problem's code, when the answer was problem+json.
export type Sent<T> = { ok: true; data: T } | { ok: false; status: number; detail: string; fields: FieldErrors; inDoubt: boolean; code?: string };

const IN_DOUBT = "It may or may not have been saved: look at what is stored before trying again.";

export async function sendJson<T>(url: string, method: "POST" | "PUT" | "PATCH", body: unknown, options: { withinMs?: number } = {}): Promise<Sent<T>> {
  const withinMs = options.withinMs ?? CONSOLE_ANSWER_WITHIN_MS;
  const signal = AbortSignal.timeout(withinMs);
  let res: Response;
  let parsed: (T & { detail?: string; code?: string; errors?: { path: string; message: string }[] }) | null;
  try {
    res = await fetch(url, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal });
    parsed = await res.json().catch((error: unknown) => {
      if (signal.aborted) throw error;
      return null;
    });
  } catch (error) {
    return { ok: false, status: 0, detail: noAnswer(error, withinMs), fields: {}, inDoubt: true };
  }
  if (res.ok && parsed) return { ok: true, data: parsed };
  const fields: FieldErrors = {};
  for (const e of parsed?.errors ?? []) fields[e.path] ??= e.message;
  const detail = parsed?.detail ?? `The server answered ${res.status}.`;
  const inDoubt = mayHaveBeenSaved(res.status, detail);
  return { ok: false, status: res.status, detail: res.status === 401 ? "Your session has ended. Sign in again." : detail, fields, inDoubt, code: parsed?.code };
}

// The line above a form after a refused change: when every field message shows at its field
// (`shown`: the paths the form has fields for), they speak for themselves, so only point at them;
// otherwise the server's detail (a field the form does not show, such as the operation id a
// match names, was reported as "One field needs a change" with nothing marked). `outcome` says
// what did not happen, unless the change may have happened after all (inDoubt).
export function problemLine(res: { detail: string; fields: FieldErrors; inDoubt: boolean }, outcome: string, shown: readonly string[] = []): string {
  const paths = Object.keys(res.fields);
  if (paths.length && paths.every((p) => shown.includes(p))) {
    return `${paths.length === 1 ? "One field needs" : `${paths.length} fields need`} a change. ${outcome}`;
  }
  return `${res.detail.replace(/\.?$/, ".")} ${res.inDoubt ? IN_DOUBT : outcome}`;
}
