import { answerHeaders } from "@/lib/http/respond";

// RFC 9457 problem details. Clients branch on `code`; this table is the one place
// that maps each code to its HTTP status and title.
export const problemCodes = {
  "invalid-json": { status: 400, title: "Malformed JSON body" },
  "invalid-request": { status: 400, title: "The request is not valid" },
  "idempotency-key-missing": { status: 400, title: "Idempotency-Key header is required" },
  "idempotency-key-invalid": { status: 400, title: "Idempotency-Key header is malformed" },
  "invalid-signature": { status: 400, title: "Webhook signature, timestamp or headers not valid" },
  unauthorized: { status: 401, title: "Missing, unknown or revoked API key" },
  forbidden: { status: 403, title: "Not allowed for this key" },
  "approval-rejected": { status: 403, title: "The approval for this operation was rejected" },
  "approval-mismatch": { status: 403, title: "The approval does not cover this claim" },
  "not-found": { status: 404, title: "Not found" },
  "approval-not-found": { status: 404, title: "Approval not found" },
  "tool-not-found": { status: 404, title: "Tool not found" },
  "operation-not-found": { status: 404, title: "Operation not found" },
  "subscription-not-found": { status: 404, title: "Event subscription not found" },
  "delivery-not-found": { status: 404, title: "Event delivery not found" },
  "webhook-connection-not-found": { status: 404, title: "Webhook connection not found" },
  "webhook-event-not-found": { status: 404, title: "Webhook event not found" },
  "method-not-allowed": { status: 405, title: "Method not allowed" },
  // Answered by lib/http/front-door.cjs before Next.js routes the request (it repeats these three).
  "request-timeout": { status: 408, title: "Request not received in time" },
  "operation-in-progress": { status: 409, title: "Another attempt holds the lease" },
  "outcome-unknown": { status: 409, title: "The outcome is unknown: reconcile, do not retry" },
  "lease-lost": { status: 409, title: "The lease was lost" },
  "already-resolved": { status: 409, title: "The operation was already resolved differently" },
  "approval-already-decided": { status: 409, title: "The approval was already decided" },
  "approval-expired": { status: 409, title: "The approval expired" },
  "invalid-state": { status: 409, title: "Not allowed in the operation's current state" },
  "side-effect-backwards": { status: 409, title: "A side effect's state only moves forward" },
  "side-effect-mismatch": { status: 409, title: "The side effect was recorded with other provider details" },
  "payload-too-large": { status: 413, title: "Request body too large" },
  "unsupported-media-type": { status: 415, title: "Content-Type must be application/json" },
  "idempotency-key-reused": { status: 422, title: "Idempotency-Key reused with different arguments" },
  "retry-backoff": { status: 429, title: "Retry backoff not over yet" },
  "request-header-too-large": { status: 431, title: "Request header fields too large" },
  "internal-error": { status: 500, title: "Internal error" },
  "unsupported-method": { status: 501, title: "Method not supported by this server" },
  "service-unavailable": { status: 503, title: "Service unavailable" },
} as const;

export type ProblemCode = keyof typeof problemCodes;

export type ProblemBody = {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  [extra: string]: unknown;
};

export class ProblemError extends Error {
  readonly code: ProblemCode;
  readonly extras: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    code: ProblemCode,
    detail: string,
    options: { extras?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.name = "ProblemError";
    this.code = code;
    this.extras = options.extras ?? {};
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return problemCodes[this.code].status;
  }

  body(): ProblemBody {
    return problemBody(this.code, this.message, this.extras);
  }
}

export function problemBody(code: ProblemCode, detail: string, extras: Record<string, unknown> = {}): ProblemBody {
  const { status, title } = problemCodes[code];
  const own = { type: `urn:tollgate:problem:${code}`, title, status, detail, code };
  // Extras add members, never replace these (an event's `status` once overwrote the HTTP status).
  return { ...own, ...extras, ...own };
}

export function problemResponse(error: ProblemError, headers: Record<string, string> = {}): Response {
  const text = JSON.stringify(error.body());
  return new Response(text, { status: error.status, headers: answerHeaders(text, "application/problem+json", { ...error.headers, ...headers }) });
}
