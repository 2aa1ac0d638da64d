import { describe, expect, it } from "vitest";
import { hasInvisible, jsonHasInvisible, showInvisible, visibleJson, visibleUnits } from "@/lib/console/visible-characters";
import { shortPair } from "@/lib/approvals/duplicate-intents";

// Review, 2026-12-02: the approval page showed {"to":"acct_\u202E9876"} as acct_6789. What a
// person approves must show every character: format (Cf), line and paragraph separators (Zl,
// Zp) and the controls JSON.stringify leaves raw are \uXXXX escapes wherever args are shown.

const RAW = /[\p{Cf}\p{Zl}\p{Zp}\u007F-\u009F]/u;

describe("visible characters", () => {
  it("escapes U+202E, U+2028/2029, U+200B and other format characters; leaves the rest as it is", () => {
    expect(showInvisible("acct_\u202E9876")).toBe("acct_\\u202E9876");
    expect(showInvisible("a\u2028b\u2029c\u200Bd\u200Ee\u2066f\u2069g\uFEFFh\u00ADi\u061Cj")).toBe(
      "a\\u2028b\\u2029c\\u200Bd\\u200Ee\\u2066f\\u2069g\\uFEFFh\\u00ADi\\u061Cj",
    );
    // The controls JSON.stringify does not escape: DEL and C1.
    expect(showInvisible("x\u007Fy\u0085z\u009F")).toBe("x\\u007Fy\\u0085z\\u009F");
    // An astral format character (a tag, used to hide text from a reader) as JSON writes it.
    expect(showInvisible("ok\u{E0041}")).toBe("ok\\uDB40\\uDC41");
    expect(showInvisible("Grüße, 東京, café, 👍, a b")).toBe("Grüße, 東京, café, 👍, a b");
    expect(hasInvisible("plain")).toBe(false);
    expect(hasInvisible("acct_\u202E9876")).toBe(true);
  });

  it("keeps the pretty-printer's newlines and parses back to the same value", () => {
    const value = { to: "acct_\u202E9876", note: "line\u2028two", n: [1, "\u200B"] };
    const text = visibleJson(value, 2);
    expect(text).toContain("\n  \"to\": \"acct_\\u202E9876\"");
    expect(text).not.toMatch(RAW);
    expect(JSON.parse(text)).toEqual(value);
    expect(jsonHasInvisible(value)).toBe(true);
    // A C0 control JSON.stringify already escapes: nothing left for the warning.
    expect(jsonHasInvisible({ bell: "\u0007", line: "a\nb" })).toBe(false);
    expect(visibleJson(undefined)).toBe("null");
  });

  it("cuts on whole units: an escape, an emoji or a surrogate pair is never halved", () => {
    expect(visibleUnits("a\u202Eb👍🏽")).toEqual(["a", "\\u202E", "b", "👍🏽"]);
  });

  it("the duplicate-intent pair shows the same escapes", () => {
    const pair = shortPair("acct_\u202E9876", "acct_6789");
    expect(pair).toEqual({ here: "\"acct_\\u202E9876\"", there: "\"acct_6789\"" });
    const long = shortPair(`${"x".repeat(100)}\u202E1`, `${"x".repeat(100)}2`);
    expect(long.here).toContain("\\u202E");
    expect(long.here).not.toMatch(RAW);
  });
});
