import type { NextRequest } from "next/server";
import { undecodablePathResponse, undecodableSegment } from "@/lib/http/undecodable-path";

// Runs only for paths that contain a "%" (see the matcher): every other request, the hot path
// included, never enters it. Such a path that does not decode gets a problem+json 400 here, where
// Next.js would otherwise answer a plain-text 500 (lib/http/undecodable-path.ts).
export function proxy(request: NextRequest): Response | undefined {
  const segment = undecodableSegment(request.nextUrl.pathname);
  return segment === null ? undefined : undecodablePathResponse(segment);
}

export const config = { matcher: "/(.*%.*)" };
