import { describe, expect, it } from "vitest";
import { type Json } from "@/lib/operations/canonical-json";
import { FINGERPRINT_VERSION, fingerprint } from "@/lib/operations/fingerprint";

const parse = (text: string) => JSON.parse(text) as Json;

// The fingerprint decides between "same request again" (replay / 409) and "same key,
// different intent" (422). It must ignore spelling and catch every change of meaning.
describe("fingerprint", () => {
  it("is versioned: \"v1:\" followed by a SHA-256 in hex", () => {
    expect(FINGERPRINT_VERSION).toBe("v1");
    expect(fingerprint("tickets.create", { title: "x" })).toMatch(/^v1:[0-9a-f]{64}$/);
  });

  it("is deterministic", () => {
    expect(fingerprint("t", { a: 1 })).toBe(fingerprint("t", { a: 1 }));
  });

  it("does not depend on the order of object keys, at any depth", () => {
    const a = parse('{"to":"ops","body":{"lines":[{"qty":1,"sku":"a"}],"priority":"high"}}');
    const b = parse('{"body":{"priority":"high","lines":[{"sku":"a","qty":1}]},"to":"ops"}');
    expect(fingerprint("mail.send", a)).toBe(fingerprint("mail.send", b));
  });

  it("reads numbers as JSON does: 1.0, 1 and 1e0 are the same argument", () => {
    const one = fingerprint("t", parse('{"amount":1}'));
    expect(fingerprint("t", parse('{"amount":1.0}'))).toBe(one);
    expect(fingerprint("t", parse('{"amount":1e0}'))).toBe(one);
    expect(fingerprint("t", parse('{"amount":1.5}'))).not.toBe(one);
  });

  it("includes the tool: the same args for another tool are another intent", () => {
    expect(fingerprint("payments.refund", { id: "ch_1" })).not.toBe(fingerprint("payments.capture", { id: "ch_1" }));
  });

  it.each([
    { name: "a changed value", a: '{"a":1}', b: '{"a":2}' },
    { name: "an added key", a: '{"a":1}', b: '{"a":1,"b":1}' },
    { name: "null versus a missing key", a: '{"a":null}', b: "{}" },
    { name: "a string versus a number", a: '{"a":"1"}', b: '{"a":1}' },
    { name: "array order", a: '{"a":[1,2]}', b: '{"a":[2,1]}' },
    { name: "string case", a: '{"a":"X"}', b: '{"a":"x"}' },
    { name: "a key named __proto__", a: '{"__proto__":{"amount":5}}', b: "{}" },
  ])("changes with $name", ({ a, b }) => {
    expect(fingerprint("t", parse(a))).not.toBe(fingerprint("t", parse(b)));
  });

  it("cannot be forged by moving text between the tool name and the args", () => {
    // The tool and args are hashed as one JSON document, not concatenated.
    expect(fingerprint("a", { b: 1 })).not.toBe(fingerprint("a\",\"b", {}));
  });
});
