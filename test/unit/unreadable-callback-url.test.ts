import { describe, expect, it } from "vitest";
import { cookieHeaderWithout, readableCallbackUrl } from "@/lib/auth/unreadable-callback-url";

describe("readableCallbackUrl", () => {
  it("reads as next-auth's assert does: a path or an http(s) URL", () => {
    for (const url of ["/t/acme", "//evil.example", "http://a.example/", "https://a.example/x?y=1"]) expect(readableCallbackUrl(url), url).toBe(true);
    for (const url of ["x", "http://%", "javascript:alert(1)", "mailto:a@b.c", "true"]) expect(readableCallbackUrl(url), url).toBe(false);
  });
});

describe("cookieHeaderWithout", () => {
  it("drops the named cookies, one sent as a bare name too, and keeps the rest as sent", () => {
    const header = "a=1; next-auth.callback-url=x; b=2=3; next-auth.callback-url; c";
    expect(cookieHeaderWithout(header, ["next-auth.callback-url"])).toBe("a=1; b=2=3; c");
  });
});
