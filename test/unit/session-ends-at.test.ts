import { describe, expect, it } from "vitest";
import { sessionEndsAt } from "@/lib/auth/ended-sessions";

// A console session ends TOLLGATE_SESSION_HOURS after its sign-in, however often next-auth
// rolled its JWT forward: the bound that lets a signed-out session's row be pruned safely.
describe("sessionEndsAt", () => {
  it("is the sign-in time plus the session hours", () => {
    const signedIn = Date.UTC(2026, 11, 1, 0, 0, 0) / 1000;
    expect(sessionEndsAt(signedIn, 8)?.toISOString()).toBe("2026-12-01T08:00:00.000Z");
    expect(sessionEndsAt(signedIn, 0.5)?.toISOString()).toBe("2026-12-01T00:30:00.000Z");
  });

  it("is unknown for a session from before sign-in times were kept", () => {
    expect(sessionEndsAt(undefined, 8)).toBeNull();
  });
});
