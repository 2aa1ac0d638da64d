import { z } from "zod";
import { jsonRecord } from "@/lib/http/json-record";

// A tool's optional reconciliation probe: a read-only GET the worker sends to the provider for
// the tool's `unknown` operations, and how to read its answer. Part of the tool policy
// (policy.probe), stored in tool.probe.
//   { "url": "https://api.example.com/charges?idempotency_key={downstreamKey}",
//     "succeeded": { "status": [200], "path": "data.0.status", "equals": ["paid"] },
//     "failed":    { "status": [200], "path": "data.0.status", "equals": ["failed"] },
//     "notFound":  { "status": [404] },
//     "resourceIdPath": "data.0.id" }
// Placeholders: {downstreamKey}, {resourceId}, {operationId} (URL-encoded when filled in).

export const probePlaceholders = ["downstreamKey", "resourceId", "operationId"] as const;

// Dotted path into the JSON answer; a numeric segment indexes an array ("data.0.status").
const jsonPath = z
  .string()
  .max(200)
  .regex(/^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/, "must be a dotted path such as data.0.status");

const scalar = z.union([z.string().max(500), z.number(), z.boolean(), z.null()]);

export const probeMatchSchema = z
  .object({
    // Without it, a succeeded or failed rule reads 2xx answers only (evaluate-probe.ts).
    status: z.array(z.number().int().min(100).max(599)).min(1).max(20).optional(),
    path: jsonPath.optional(),
    // With a path and no `equals`, the value merely has to be present (not null).
    equals: z.array(scalar).min(1).max(20).optional(),
  })
  .strict()
  .refine((m) => m.status !== undefined || m.path !== undefined, "give status codes, a JSON path, or both")
  .refine((m) => m.equals === undefined || m.path !== undefined, { message: "equals needs a path", path: ["equals"] });

const headerName = z.string().regex(/^[A-Za-z0-9-]{1,100}$/, "must be an HTTP header name");
// Printable ASCII on one line. A line break, NUL or other control character (say a base64
// credential wrapped at 76 columns) makes the HTTP client throw with the whole value in its
// message, and beyond U+00FF nothing can be sent in a header at all: refused when the tool is
// saved, so it never fails in the worker. The message never repeats the value.
const headerValue = z
  .string()
  .max(2000)
  .regex(/^[\x20-\x7e]*$/, "must be printable ASCII on one line: no line breaks, tabs or other control characters (join a wrapped credential)");

export const probeSchema = z
  .object({
    url: z
      .string()
      .max(2000)
      .refine(validTemplate, `must be an http(s) URL; placeholders: ${probePlaceholders.map((p) => `{${p}}`).join(", ")}`)
      // A credential belongs in `headers`, which are sealed; the URL is shown to whoever reads
      // the tool, and the HTTP client refuses such a URL with the URL in its message.
      .refine(withoutUserinfo, "must not carry a user name or password (user:pass@): send the credential in headers")
      // The credential in `headers` goes to this host: an operation's values (a resourceId the
      // agent reported) must never choose where it is sent. In the host a placeholder may only
      // name subdomains of a fixed domain ("{resourceId}.provider.example"), never the domain.
      // Written plainly, so the host checked below is the host the request goes to: a URL parser
      // also reads "https:{resourceId}/x", "https:/x", backslashes and stray whitespace as URLs,
      // with the placeholder as their host.
      .refine((t) => /^https?:\/\/[^\s\\]+$/i.test(t), "must start with http:// or https:// and hold no spaces, tabs or backslashes")
      .refine(
        hostStaysFixed,
        "a placeholder may stand in the host only before a fixed domain of two labels or more ({resourceId}.api.example.com): an operation's values must not choose where the probe's credential goes",
      ),
    // Sent with every probe; usually the provider's credential. Stored sealed and shown as
    // "[redacted]" from then on; "[redacted]" in a PUT keeps the stored value (probe-headers.ts).
    headers: jsonRecord(headerName, headerValue).optional(),
    timeoutMs: z.number().int().min(100).max(30_000).default(5000),
    maxProbes: z.number().int().min(1).max(50).default(10),
    succeeded: probeMatchSchema.optional(),
    failed: probeMatchSchema.optional(),
    notFound: probeMatchSchema.optional(),
    resourceIdPath: jsonPath.optional(),
  })
  .strict()
  .refine((p) => p.succeeded !== undefined || p.failed !== undefined, "a probe needs at least one of succeeded and failed")
  .refine((p) => p.headers === undefined || Object.keys(p.headers).length <= 20, { message: "at most 20 headers", path: ["headers"] });

export type Probe = z.infer<typeof probeSchema>;
export type ProbeMatch = z.infer<typeof probeMatchSchema>;

// The template read as a URL, each placeholder standing as "x"; null if it is no URL.
function templateUrl(template: string): URL | null {
  return URL.parse(template.replace(/\{[^{}]*\}/g, "x"));
}

// Where a probe URL template sends its request (scheme, host, port); null if it is no URL.
export function probeOrigin(template: string): string | null {
  return templateUrl(template)?.origin ?? null;
}

// A URL's scheme and authority ("https://api.example.com:8443"), the authority captured.
export const URL_AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i;

function hostStaysFixed(template: string): boolean {
  const authority = URL_AUTHORITY.exec(template)?.[1];
  if (authority === undefined || !/\{[^{}]*\}/.test(authority)) return true; // validTemplate reports a non-URL
  const fixed = authority.slice(authority.lastIndexOf("}") + 1);
  // Two labels or more, the last with a letter (".1.1" would make an IPv4 address of the value).
  return /^(\.[a-z0-9-]+)+\.[a-z0-9-]*[a-z][a-z0-9-]*(:\d+)?$/i.test(fixed);
}

function withoutUserinfo(template: string): boolean {
  const url = templateUrl(template);
  return url === null || (url.username === "" && url.password === ""); // validTemplate reports a non-URL
}

function validTemplate(template: string): boolean {
  const names = [...template.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1]);
  if (names.some((n) => !(probePlaceholders as readonly string[]).includes(n ?? ""))) return false;
  const protocol = templateUrl(template)?.protocol;
  return protocol === "https:" || protocol === "http:";
}
