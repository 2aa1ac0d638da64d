import { describe, expect, it } from "vitest";
import { refusalResult } from "@/lib/mcp-gateway/refusal-result";

// A claim Tollgate did not grant, in the words the model acts on: the advice must never lead it
// to a new key for the same action, which is how one intent becomes two effects.
const refusal = (status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  refusalResult({ status, headers: new Headers(headers), body });
const text = (r: ReturnType<typeof refusalResult>) => (r.content[0] as { text: string }).text;

describe("a refused claim's advice", () => {
  it("a 422 says to repeat the original arguments under the same key, naming only the paths", () => {
    const r = refusal(422, { code: "idempotency-key-reused", mismatch: ["args.title"], detail: "The key was used with other arguments" });
    expect(r.isError).toBe(true);
    expect(text(r)).toContain("(args.title)");
    expect(text(r)).toContain("already ran or may have run");
    expect(text(r)).toContain("do not use a new key for it");
    expect(text(r)).not.toMatch(/needs a new key/);
  });

  it("a 503 says the tool was not called and to repeat with the same key after Retry-After", () => {
    const r = refusal(503, { code: "service-unavailable", detail: "may or may not have been recorded" }, { "retry-after": "1" });
    expect(text(r)).toMatch(/^Tollgate could not answer just now, so the tool was not called\. Repeat the same call with the same idempotency key in 1 s; do not use a new key for it\./);
    expect(r._meta?.["io.tollgate/operation"]).toMatchObject({ status: 503, code: "service-unavailable", retryAfterSeconds: 1 });
  });
});
