import { describe, expect, it } from "vitest";
import { jsonNestsDeeperThan, jsonTextHasUnstorableEscape } from "@/lib/http/json-limits";

// The depth check reads the text: brackets inside strings (escaped quotes included) do not count.

describe("jsonNestsDeeperThan", () => {
  it("counts arrays and objects, at the limit and one past it", () => {
    expect(jsonNestsDeeperThan(`${"[".repeat(3)}${"]".repeat(3)}`, 3)).toBe(false);
    expect(jsonNestsDeeperThan(`${"[".repeat(4)}${"]".repeat(4)}`, 3)).toBe(true);
    expect(jsonNestsDeeperThan('{"a":{"b":[{"c":1}]}}', 4)).toBe(false);
    expect(jsonNestsDeeperThan('{"a":{"b":[{"c":{}}]}}', 4)).toBe(true);
    expect(jsonNestsDeeperThan('[[1],[2],[3],[4],[5]]', 2)).toBe(false);
  });

  it("ignores brackets inside strings, however the quotes are escaped", () => {
    expect(jsonNestsDeeperThan(JSON.stringify({ s: "[[[[[[{{{{{{" }), 1)).toBe(false);
    expect(jsonNestsDeeperThan(JSON.stringify({ s: 'say \\"[[[[\\" and \\\\' }), 1)).toBe(false);
    expect(jsonNestsDeeperThan(JSON.stringify({ s: "\\", t: ["x"] }), 1)).toBe(true);
  });

  it("walks 5,000 levels without recursion", () => {
    expect(jsonNestsDeeperThan(`${"[".repeat(5000)}${"]".repeat(5000)}`, 128)).toBe(true);
  });
});

// What jsonb refuses, found in the text itself: JSON.parse keeps only the last value of a repeated
// key, and PostgreSQL parses every one (webhook review, 2026-12-03).
describe("jsonTextHasUnstorableEscape", () => {
  it.each([
    ['{"a":"\\u0000","a":"ok"}', true],
    ['{"a":"\\ud800","a":"ok"}', true],
    ['{"a":"\\udc00x"}', true],
    ['{"a":"\\ud800x"}', true],
    ['{"a":"\\ud800\\n"}', true],
    ['{"a":"\\ud800\\u0041"}', true],
    ['{"a":"\\ud800"}', true],
    ['{"\\u0000":1}', true],
    ['{"a":"\\ud83d\\ude00"}', false],
    ['{"a":"\\\\u0000"}', false], // an escaped backslash, then the letters u0000
    ['{"a":"\\u00e9\\"\\u0041"}', false],
    ['{"a":"😀 ok"}', false],
  ])("%s → %s", (text, expected) => {
    expect(jsonTextHasUnstorableEscape(text)).toBe(expected);
  });
});
