import { ProblemError, problemResponse } from "@/lib/http/problem";

// next-auth 4 reads a POST whose Content-Type names JSON with `req.json()` and catches nothing
// (next-auth/next/utils.js getBody): a body that is not JSON was a 500 with an empty body. Its own
// pages post forms; a JSON body must at least be an object for next-auth to read its fields.
// Answers the 400 for such a body, or null to let next-auth handle the request.
export async function unreadableAuthBody(req: Request): Promise<Response | null> {
  if (req.method !== "POST" || !req.headers.get("content-type")?.includes("application/json")) return null;
  let body: unknown;
  try {
    body = JSON.parse(await req.clone().text());
  } catch {
    return problemResponse(new ProblemError("invalid-request", "The body is not valid JSON."));
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return problemResponse(new ProblemError("invalid-request", "The body must be a JSON object."));
  }
  return null;
}
