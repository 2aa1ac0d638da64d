import { ZodError } from "zod";
import { log } from "@/lib/log";
import { metrics } from "@/lib/metrics/registry";
import { ProblemError, problemResponse } from "@/lib/http/problem";
import { newRequestContext, type RequestContext } from "@/lib/http/request-context";
import { formatPath } from "@/lib/http/format-path";
import { prismaDatabaseUnavailable } from "@/lib/db/database-unavailable";

// Every route handler runs inside this: it gives the request an id, turns any thrown
// ProblemError/ZodError into problem+json, a database that cannot serve the request into a 503
// (the hot path classifies its own; this catches what comes through Prisma), hides unexpected errors behind a generic 500,
// and writes exactly one log line per request.
export async function handleRequest(
  req: Request,
  route: string,
  run: (ctx: RequestContext) => Promise<Response>,
): Promise<Response> {
  const ctx = newRequestContext(req);
  let response: Response;
  let failure: unknown;
  let problem: ProblemError | undefined;
  try {
    response = await run(ctx);
  } catch (error) {
    failure = error;
    problem = toProblem(error);
    response = problemResponse(problem);
  }
  response.headers.set("x-request-id", ctx.requestId);
  const ms = Math.round((performance.now() - ctx.startedAt) * 100) / 100;
  metrics().httpRequests.inc({ route, status: String(response.status) });
  const line = { requestId: ctx.requestId, method: req.method, route, status: response.status, ms, ...ctx.fields };
  if (response.status >= 500) {
    log().error({ ...line, err: failure instanceof Error ? { message: failure.message, stack: failure.stack } : failure, ...causeOf(problem?.cause !== undefined ? problem : failure) }, "request failed");
  } else {
    log().info(line, "request");
  }
  return response;
}

// A 503 built from a database error carries it as its cause (whether the route threw the 503 or
// toProblem made it from Prisma's error): its code and message say why.
// (A field of its own: pino's `err` serializer folds a cause into the message and drops its code.)
function causeOf(failure: unknown): { cause?: { code: unknown; message: unknown } } {
  const cause = failure instanceof Error ? (failure.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  return cause ? { cause: { code: cause.code, message: cause.message } } : {};
}

export function toProblem(error: unknown): ProblemError {
  if (error instanceof ProblemError) return error;
  if (error instanceof ZodError) return invalidRequest(error);
  const unavailable = prismaDatabaseUnavailable(error);
  if (unavailable) return unavailable;
  return new ProblemError("internal-error", "Something went wrong on our side. Quote the X-Request-Id when reporting it.");
}

export function invalidRequest(error: ZodError): ProblemError {
  // An unknown field is reported at its own path ("policy.leaseSecond"), as Stripe does.
  const errors = error.issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({ path: formatPath([...issue.path, key]), message: `Unknown field "${key}"` }))
      : [{ path: formatPath(issue.path), message: issue.message }],
  );
  const first = errors[0];
  const detail = first ? `${first.path || "body"}: ${first.message}` : "The request is not valid.";
  return new ProblemError("invalid-request", detail, { extras: { errors } });
}
