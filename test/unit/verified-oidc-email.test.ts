import { describe, expect, it } from "vitest";
import { verifiedOidcEmail } from "@/lib/auth/verified-oidc-email";

describe("the email an SSO sign-in is matched by", () => {
  it("is the provider's email only when the provider verified it", () => {
    expect(verifiedOidcEmail({ sub: "1", email: " Ops@Acme.example ", email_verified: true })).toBe("ops@acme.example");
    expect(verifiedOidcEmail({ sub: "1", email: "ops@acme.example", email_verified: "true" })).toBe("ops@acme.example");
  });

  it("is nothing for a verified email PostgreSQL cannot hold (U+0000, half a surrogate pair): no user has it", () => {
    for (const email of ["ops\u0000@acme.example", "ops\ud800@acme.example"]) {
      expect(verifiedOidcEmail({ email, email_verified: true })).toBeNull();
    }
  });

  it("is nothing when the claim is false, missing or not a boolean, or there is no email", () => {
    for (const profile of [
      { email: "ops@acme.example", email_verified: false },
      { email: "ops@acme.example" },
      { email: "ops@acme.example", email_verified: "yes" },
      { email: "ops@acme.example", email_verified: 1 },
      { email: "", email_verified: true },
      { email_verified: true },
      null,
      undefined,
    ]) {
      expect(verifiedOidcEmail(profile), JSON.stringify(profile)).toBeNull();
    }
  });

  it("with requireVerified: false (a provider that never sends the claim), an email without it is trusted, an explicit false still is not", () => {
    expect(verifiedOidcEmail({ email: "ops@acme.example" }, { requireVerified: false })).toBe("ops@acme.example");
    expect(verifiedOidcEmail({ email: "ops@acme.example", email_verified: false }, { requireVerified: false })).toBeNull();
    expect(verifiedOidcEmail({ email: "ops@acme.example", email_verified: "false" }, { requireVerified: false })).toBeNull();
  });
});
