import { afterEach, describe, expect, it } from "vitest";
import { unusableConsoleHost } from "@/lib/auth/auth-host";

// With NEXTAUTH_URL set next-auth never reads Host or X-Forwarded-Host (utils/detect-origin.js), so
// no value of theirs can break it, and a console behind a proxy that sends a list keeps working.
describe("unusableConsoleHost", () => {
  const before = process.env.NEXTAUTH_URL;
  afterEach(() => {
    if (before === undefined) delete process.env.NEXTAUTH_URL;
    else process.env.NEXTAUTH_URL = before;
  });

  it("refuses what next-auth cannot parse as its origin, and only that", () => {
    delete process.env.NEXTAUTH_URL;
    for (const value of ["a:b", "", "console.example.com, proxy.internal", "a b"]) {
      expect(unusableConsoleHost(new Headers({ "x-forwarded-host": value }))?.code, value).toBe("invalid-request");
      expect(unusableConsoleHost(new Headers({ host: value }))?.code, value).toBe("invalid-request");
    }
    for (const value of ["console.example.com", "console.example.com:8443", "127.0.0.1:3000", "[::1]"]) {
      expect(unusableConsoleHost(new Headers({ "x-forwarded-host": value, host: "a:b" })), value).toBeNull();
    }
    expect(unusableConsoleHost(new Headers())).toBeNull();
  });

  it("refuses nothing when NEXTAUTH_URL gives next-auth its origin", () => {
    process.env.NEXTAUTH_URL = "https://console.example.com";
    expect(unusableConsoleHost(new Headers({ "x-forwarded-host": "console.example.com, proxy.internal" }))).toBeNull();
    expect(unusableConsoleHost(new Headers({ host: "a:b" }))).toBeNull();
  });
});
