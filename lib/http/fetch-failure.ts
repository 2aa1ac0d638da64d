import { EgressRefusedError } from "@/lib/http/egress";

// What the console says when a probe, or a delivery to an event subscription, got no answer.
// The text goes into the probe's audit reason, which every role reads on the trace, and on the
// delivery (its last error), so it is never the error's own message: the HTTP
// client's messages quote what it was given, a header value it refused (the provider's
// credential) or a whole URL with its query string. Each cause maps to a fixed text; only the
// egress policy's refusal is kept as written, since it names nothing but the host the tenant typed.

const byCode: [test: (code: string) => boolean, text: string][] = [
  [(c) => c === "ECONNREFUSED", "connection refused"],
  [(c) => c === "ENOTFOUND" || c.startsWith("EAI_"), "the host name did not resolve (DNS)"],
  [(c) => ["ETIMEDOUT", "UND_ERR_CONNECT_TIMEOUT"].includes(c), "no connection within the connect timeout"],
  [(c) => ["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"].includes(c), "the provider stopped answering (timeout)"],
  [(c) => ["EHOSTUNREACH", "ENETUNREACH", "EHOSTDOWN", "ENETDOWN"].includes(c), "the host is unreachable"],
  [(c) => ["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED"].includes(c), "the connection closed before a full answer"],
  [
    (c) => c === "EPROTO" || /^(ERR_TLS_|ERR_SSL_|ERR_OSSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_)/.test(c),
    "the TLS handshake failed (certificate or protocol)",
  ],
  [(c) => c.startsWith("UND_ERR_INVALID") || c.startsWith("ERR_INVALID"), "the request could not be built (invalid header or URL)"],
];

export function describeFetchFailure(error: unknown, timeoutMs: number): string {
  const chain = causes(error);
  if (chain.some((e) => e.name === "TimeoutError")) return `no answer within ${timeoutMs} ms`;
  const refusal = chain.find((e): e is EgressRefusedError => e instanceof EgressRefusedError);
  if (refusal) return refusal.message;
  const code = chain.map(codeOf).find((c) => c !== undefined);
  if (code) {
    const known = byCode.find(([test]) => test(code));
    // An unlisted code is still a constant of Node or undici, never data: it helps, and tells nothing.
    return known ? known[1] : `the request failed (${code})`;
  }
  // The fetch API's own TypeErrors (a header value, a URL it will not send) carry no cause.
  if (error instanceof TypeError && chain.length === 1) return "the request could not be built (invalid header or URL)";
  return "the request failed before an answer";
}

// The error and its causes (undici wraps the socket's error in TypeError("fetch failed");
// Node's Happy Eyeballs in an AggregateError), a few levels deep.
function causes(error: unknown): Error[] {
  const chain: Error[] = [];
  let current: unknown = error;
  while (current instanceof Error && chain.length < 5) {
    chain.push(current);
    if (current instanceof AggregateError && current.errors[0] instanceof Error) chain.push(current.errors[0] as Error);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

function codeOf(error: Error): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && /^[A-Z][A-Z0-9_]{1,60}$/.test(code) ? code : undefined;
}
