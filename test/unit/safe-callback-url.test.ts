import { describe, expect, it } from "vitest";
import { safeCallbackUrl } from "@/lib/console/safe-callback-url";

// The sign-in page follows ?callbackUrl= after a real sign-in: only places on this console.
describe("safeCallbackUrl", () => {
  const origin = "http://127.0.0.1:3000";

  it("follows a path on this console, with its query and fragment", () => {
    expect(safeCallbackUrl("/t/acme/audit?action=user.#top", origin)).toBe("/t/acme/audit?action=user.#top");
    expect(safeCallbackUrl("/", origin)).toBe("/");
  });

  it("follows an absolute URL of this origin (next-auth writes those) as its path", () => {
    expect(safeCallbackUrl(`${origin}/t/acme`, origin)).toBe("/t/acme");
  });

  it("sends anything else to /", () => {
    const elsewhere = [
      "https://evil.example/",
      "//evil.example/",
      "/\\evil.example/",
      "/\t/evil.example/", // a browser drops the tab: //evil.example/
      "/.//evil.example/", // dot segments normalise to //evil.example/
      "/..//evil.example/",
      "/a/..//evil.example/",
      "/%2e//evil.example/",
      "\\\\evil.example/",
      "javascript:alert(1)",
      "http://127.0.0.1:3000.evil.example/",
      "http://127.0.0.1:3000@evil.example/",
      "https://127.0.0.1:3000/t/acme", // another scheme is another origin
      "t/acme",
      "",
      null,
    ];
    for (const value of elsewhere) expect(safeCallbackUrl(value, origin), String(value)).toBe("/");
  });
});
