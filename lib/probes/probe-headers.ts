import { decryptSecret, encryptSecret } from "@/lib/crypto/secret-box";
import { ProblemError } from "@/lib/http/problem";
import { probeOrigin, type Probe } from "@/lib/probes/probe-schema";

// A probe asks the provider's API, which wants a credential (Stripe's charge search needs the
// secret key): its header values are secrets. They are stored sealed (AES-256-GCM under
// TOLLGATE_SECRET_KEY, lib/crypto/secret-box.ts) in tool.probe as `sealedHeaders`, never shown
// again (the API, the console and the audit log show REDACTED), and opened by the worker only
// for the request. A PUT that sends a header's value as REDACTED keeps the stored one, so a tool
// read, edited and written back keeps its credentials; any other value replaces it, and a header
// left out is removed (PUT replaces the tool). Probes stored before this (plain `headers`) are
// still read, and sealed on the next PUT. REDACTED keeps a value only while the probe asks the
// same origin: whoever may edit a tool must not point its stored credential at another host
// without typing the credential again.

export const REDACTED = "[redacted]";

type Stored = Record<string, unknown> & { headers?: Record<string, string>; sealedHeaders?: Record<string, string> };

const asStored = (value: unknown): Stored | null => (value && typeof value === "object" && !Array.isArray(value) ? (value as Stored) : null);

// What goes into tool.probe for a validated probe; `previous` is the stored probe it replaces.
export function sealProbe(probe: Probe, previous: unknown, serverSecret?: string): Record<string, unknown> {
  const { headers, ...rest } = probe;
  if (!headers || Object.keys(headers).length === 0) return rest;
  const before = asStored(previous);
  const beforeOrigin = typeof before?.url === "string" ? probeOrigin(before.url) : null;
  const sameOrigin = beforeOrigin !== null && beforeOrigin === probeOrigin(probe.url);
  const sealed: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== REDACTED) {
      sealed[name] = encryptSecret(value, serverSecret);
      continue;
    }
    const kept = storedBox(before, name, serverSecret);
    if (!kept || !sameOrigin) {
      const path = `policy.probe.headers.${name}`;
      const message = kept
        ? `"${REDACTED}" keeps a stored value only while the probe asks the same host, and its URL now points at ${probeOrigin(probe.url)} instead of ${beforeOrigin}: send the value`
        : `"${REDACTED}" keeps a stored value, and this tool has none for ${name}: send the value`;
      throw new ProblemError("invalid-request", `${path}: ${message}`, { extras: { errors: [{ path, message }] } });
    }
    sealed[name] = kept;
  }
  return { ...rest, sealedHeaders: sealed };
}

// The stored value of header `name` as a box (header names are case-insensitive).
function storedBox(stored: Stored | null, name: string, serverSecret?: string): string | undefined {
  const find = (record: Record<string, string> | undefined) =>
    Object.entries(record ?? {}).find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];
  const box = find(stored?.sealedHeaders);
  if (box) return box;
  const plain = find(stored?.headers);
  return plain === undefined ? undefined : encryptSecret(plain, serverSecret);
}

// The probe as the API and the console show it: header names, never their values.
export function probeView(stored: unknown): unknown {
  const s = asStored(stored);
  if (!s) return null;
  const { sealedHeaders, headers, ...rest } = s;
  const names = [...Object.keys(sealedHeaders ?? {}), ...Object.keys(headers ?? {})];
  return names.length === 0 ? rest : { ...rest, headers: Object.fromEntries(names.map((n) => [n, REDACTED])) };
}

// The probe with its header values, for the worker's request (then validated by probeSchema).
// Throws when a value cannot be opened: TOLLGATE_SECRET_KEY changed since the tool was saved.
export function openProbe(stored: unknown, serverSecret: string): unknown {
  const s = asStored(stored);
  if (!s?.sealedHeaders) return stored;
  const { sealedHeaders, headers, ...rest } = s;
  const opened = Object.fromEntries(Object.entries(sealedHeaders).map(([n, box]) => [n, decryptSecret(box, serverSecret)]));
  return { ...rest, headers: { ...headers, ...opened } };
}
