import { randomUUID } from "node:crypto";

// Fields that end up on the request's one log line. Handlers add what they learn
// (tool, operation id, attempt, key digest) so every line can be correlated.
export type LogFields = Record<string, string | number | boolean | null | undefined>;

export type RequestContext = {
  requestId: string;
  startedAt: number;
  fields: LogFields;
  annotate: (fields: LogFields) => void;
};

export function newRequestContext(req: Request): RequestContext {
  // Accept a caller's request id only if it is short and printable, so it is safe to log and echo.
  const given = req.headers.get("x-request-id");
  const requestId = given && /^[\x21-\x7e]{1,128}$/.test(given) ? given : newRequestId();
  const fields: LogFields = {};
  return {
    requestId,
    startedAt: performance.now(),
    fields,
    annotate: (more) => Object.assign(fields, more),
  };
}

// A request id of the server's own making (answers that never reach a route, too: proxy.ts).
export function newRequestId(): string {
  return `req_${randomUUID()}`;
}
