import { ProblemError, problemResponse } from "@/lib/http/problem";
import { newRequestId } from "@/lib/http/request-context";

// A path segment that is not valid percent-encoded UTF-8 ("%ZZ", "%ED%A0%80") makes Next.js throw
// while it matches a dynamic route ([id], [...path]); its router then renders a "400" page that an
// App Router build does not have, and the client gets a plain-text 500. The proxy (proxy.ts)
// answers such paths itself, before routing, with a problem+json 400.
export function undecodableSegment(pathname: string): string | null {
  for (const segment of pathname.split("/")) {
    if (!segment.includes("%")) continue;
    try {
      decodeURIComponent(segment);
    } catch {
      return segment;
    }
  }
  return null;
}

export function undecodablePathResponse(segment: string): Response {
  // Only the offending segment is echoed (a path holds no secrets), cut short so a long one cannot
  // make the answer large.
  const shown = segment.length > 64 ? `${segment.slice(0, 64)}…` : segment;
  const problem = new ProblemError("invalid-request", `The path segment "${shown}" is not valid percent-encoded UTF-8.`, {
    extras: { errors: [{ path: "path", message: "not valid percent-encoded UTF-8" }] },
  });
  return problemResponse(problem, { "x-request-id": newRequestId() });
}
