import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, isJsonObject, type Json } from "@/lib/operations/canonical-json";

// Canonical JSON is what the fingerprint hashes: two requests that mean the same thing must
// produce the same text, and two that differ must not.
describe("canonical JSON", () => {
  it("sorts object keys, so the order a client sent them in does not matter", () => {
    const a = JSON.parse('{"b":1,"a":{"y":2,"x":[{"q":1,"p":2}]},"c":null}') as Json;
    const b = JSON.parse('{"c":null,"a":{"x":[{"p":2,"q":1}],"y":2},"b":1}') as Json;

    expect(canonicalJson(a)).toBe('{"a":{"x":[{"p":2,"q":1}],"y":2},"b":1,"c":null}');
    expect(canonicalJson(b)).toBe(canonicalJson(a));
  });

  it("keeps array order, because [1,2] and [2,1] are different intents", () => {
    expect(canonicalJson([2, 1, 3])).toBe("[2,1,3]");
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
  });

  it("sorts keys by UTF-16 code units: upper case before lower case, non-ASCII last", () => {
    const value = JSON.parse('{"é":1,"b":2,"B":3,"_":4,"a":5,"Z":6}') as Json;
    expect(canonicalJson(value)).toBe('{"B":3,"Z":6,"_":4,"a":5,"b":2,"é":1}');
  });

  it("sorts integer-like keys as strings too (\"10\" before \"9\"), like every other key", () => {
    // JS objects enumerate integer-like keys numerically whatever order they were inserted in;
    // a canonical form that says "keys sorted by code units" must not inherit that.
    const value = JSON.parse('{"9":"nine","10":"ten","a":"x"}') as Json;
    expect(canonicalJson(value)).toBe('{"10":"ten","9":"nine","a":"x"}');
  });

  it.each([
    { text: '{"n":1.0}', canonical: '{"n":1}' },
    { text: '{"n":1e2}', canonical: '{"n":100}' },
    { text: '{"n":-0}', canonical: '{"n":0}' },
    { text: '{"n":0.10}', canonical: '{"n":0.1}' },
    { text: '{"s":"\\u0041"}', canonical: '{"s":"A"}' },
  ])("reads numbers and strings as JSON.parse does: $text → $canonical", ({ text, canonical }) => {
    expect(canonicalJson(JSON.parse(text) as Json)).toBe(canonical);
  });

  it("keeps strings that only look alike apart (\"1\" is not 1, \"true\" is not true)", () => {
    expect(canonicalJson({ v: "1" })).not.toBe(canonicalJson({ v: 1 }));
    expect(canonicalJson({ v: "true" })).not.toBe(canonicalJson({ v: true }));
    expect(canonicalJson({ v: null })).not.toBe(canonicalJson({}));
  });

  it("keeps a key named __proto__ as data, so it cannot vanish from the fingerprint", () => {
    // JSON.parse makes "__proto__" an ordinary own key; copying it with `out[key] = …` would
    // set the copy's prototype instead and silently drop the argument.
    const value = JSON.parse('{"__proto__":{"amount":5},"x":1}') as Json;
    expect(canonicalJson(value)).toBe('{"__proto__":{"amount":5},"x":1}');
  });

  it("accepts only plain JSON objects as arguments, keeping a __proto__ key as data", () => {
    expect(isJsonObject(JSON.parse('{"__proto__":{"amount":5}}'))).toBe(true);
    expect(isJsonObject({ a: [1, "x", null, { b: true }] })).toBe(true);
    for (const v of [null, [], "s", 1, { n: Number.NaN }, { d: new Date() }, { f: () => 1 }]) expect(isJsonObject(v)).toBe(false);
  });

  it("passes scalars and null through unchanged", () => {
    for (const v of [null, true, false, 0, -1.5, "", "text"] as Json[]) expect(canonicalJson(v)).toBe(JSON.stringify(v));
  });

  it("quotes every string and key exactly as JSON.stringify does (quotes, backslashes, control and non-ASCII characters, lone surrogates)", () => {
    const samples = ["", "plain", 'say "hi"', "back\\slash", "tab\there", "\u0000", "\u001f", "\u007f", "é", "€", "😀", "\ud800", "\udfff x", "</script>"];
    for (const s of samples) {
      expect(canonicalJson(s)).toBe(JSON.stringify(s));
      expect(canonicalJson({ [s]: s })).toBe(`{${JSON.stringify(s)}:${JSON.stringify(s)}}`);
    }
    fc.assert(
      // Mostly printable ASCII (the fast path), spiked with what must be escaped or left to JSON.stringify.
      fc.property(
        fc.array(fc.oneof(fc.string({ unit: "binary-ascii", maxLength: 6 }), fc.constantFrom('"', "\\", "\u007f", "\u2028", "\ud800", "\udfff", "\ud83d\ude00", "é", "\n"))).map((parts) => parts.join("")),
        (s) => {
          expect(canonicalJson(s)).toBe(JSON.stringify(s));
          expect(canonicalJson([s, { [s]: [s] }])).toBe(`[${JSON.stringify(s)},{${JSON.stringify(s)}:[${JSON.stringify(s)}]}]`);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
