import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { problemBody, problemCodes, type ProblemCode } from "@/lib/http/problem";

// lib/http/front-door.cjs is plain CommonJS (preloaded before anything is compiled), so it
// repeats the problem table's entries it answers with: they must stay the same.
const frontDoor = createRequire(import.meta.url)("../../lib/http/front-door.cjs") as {
  PROBLEMS: Record<string, { status: number; title: string }>;
  problemText(code: string, detail: string): string;
  parseFailure(error: { code?: string }): [string, string];
  SERVED: Set<string>;
};

describe("the front door's problems", () => {
  it("uses codes, statuses and titles of the problem table, and the same body", () => {
    for (const [code, entry] of Object.entries(frontDoor.PROBLEMS)) {
      expect(problemCodes[code as ProblemCode], code).toEqual(entry);
      expect(JSON.parse(frontDoor.problemText(code, "why"))).toEqual(problemBody(code as ProblemCode, "why"));
    }
  });

  it("maps Node's parser errors to a status", () => {
    expect(frontDoor.parseFailure({ code: "HPE_HEADER_OVERFLOW" })[0]).toBe("request-header-too-large");
    expect(frontDoor.parseFailure({ code: "ERR_HTTP_REQUEST_TIMEOUT" })[0]).toBe("request-timeout");
    expect(frontDoor.parseFailure({ code: "HPE_INVALID_METHOD" })[0]).toBe("method-not-implemented");
    expect(frontDoor.parseFailure({ code: "HPE_INVALID_CONSTANT" })[0]).toBe("invalid-request");
    expect(frontDoor.parseFailure({})[0]).toBe("invalid-request");
  });

  it("lets through exactly the methods routes serve", () => {
    expect([...frontDoor.SERVED].sort()).toEqual(["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"]);
  });
});
