import { describe, expect, it } from "vitest";
import { type Json } from "@/lib/operations/canonical-json";
import { diffPaths } from "@/lib/operations/diff-paths";
import { shortPair } from "@/lib/approvals/duplicate-intents";

const parse = (text: string) => JSON.parse(text) as Json;

// A 422 idempotency-key-reused names where the arguments differ, never what they were:
// the stored arguments may be another request's secrets.
describe("diffPaths", () => {
  it.each([
    { name: "a changed scalar", before: '{"amount":100,"currency":"eur"}', after: '{"amount":200,"currency":"eur"}', paths: ["args.amount"] },
    { name: "a field inside an array element", before: '{"items":[{"sku":"a"},{"sku":"b"},{"sku":"c"}]}', after: '{"items":[{"sku":"a"},{"sku":"b"},{"sku":"X"}]}', paths: ["args.items[2].sku"] },
    { name: "an added key", before: '{"a":1}', after: '{"a":1,"b":2}', paths: ["args.b"] },
    { name: "a removed key", before: '{"a":1,"b":2}', after: '{"a":1}', paths: ["args.b"] },
    { name: "null versus missing", before: '{"a":null}', after: "{}", paths: ["args.a"] },
    { name: "a longer array", before: '{"xs":[1,2]}', after: '{"xs":[1,2,3]}', paths: ["args.xs[2]"] },
    { name: "a shorter array", before: '{"xs":[1,2,3]}', after: '{"xs":[1]}', paths: ["args.xs[1]", "args.xs[2]"] },
    { name: "an object replaced by a scalar", before: '{"a":{"b":1}}', after: '{"a":1}', paths: ["args.a"] },
    { name: "an array replaced by an object", before: '{"a":[1]}', after: '{"a":{"0":1}}', paths: ["args.a"] },
    { name: "a string that looks like the number", before: '{"a":1}', after: '{"a":"1"}', paths: ["args.a"] },
    { name: "several keys, listed in sorted order", before: '{"z":1,"a":1,"m":{"k":1}}', after: '{"z":2,"a":2,"m":{"k":2}}', paths: ["args.a", "args.m.k", "args.z"] },
  ])("names the path of $name", ({ before, after, paths }) => {
    expect(diffPaths(parse(before), parse(after))).toEqual(paths);
  });

  it.each([
    { name: "a space", key: "first name", path: 'args["first name"]' },
    { name: "a leading digit", key: "1st", path: 'args["1st"]' },
    { name: "a dot", key: "a.b", path: 'args["a.b"]' },
    { name: "brackets", key: "a[0]", path: 'args["a[0]"]' },
    { name: "a quote", key: 'say "hi"', path: 'args["say \\"hi\\""]' },
    { name: "nothing (empty key)", key: "", path: 'args[""]' },
    { name: "a dash", key: "x-y", path: 'args["x-y"]' },
  ])("quotes a key with $name so the path stays unambiguous", ({ key, path }) => {
    expect(diffPaths({ [key]: 1 }, { [key]: 2 })).toEqual([path]);
  });

  it("keeps plain identifier keys unquoted ($, _, digits after the first character)", () => {
    expect(diffPaths({ $ref: 1, _id: 1, a1: 1 }, { $ref: 2, _id: 2, a1: 2 })).toEqual(["args.$ref", "args._id", "args.a1"]);
  });

  it("finds no difference between documents that differ only in key order or number spelling", () => {
    expect(diffPaths(parse('{"a":1.0,"b":{"y":1,"x":2}}'), parse('{"b":{"x":2,"y":1},"a":1}'))).toEqual([]);
  });

  it("never puts a value, old or new, into its output", () => {
    const before = parse('{"card":"4242-4242-4242-4242","nested":{"token":"sk_live_secret"},"list":["p@ssw0rd"],"n":123456789}');
    const after = parse('{"card":"5555-5555-5555-4444","nested":{"token":"sk_live_other"},"list":["hunter2"],"n":987654321,"added":"brand-new-value"}');

    const out = diffPaths(before, after);

    expect(out).toEqual(["args.added", "args.card", "args.list[0]", "args.n", "args.nested.token"]);
    const text = JSON.stringify(out);
    for (const value of ["4242", "5555", "sk_live", "p@ssw0rd", "hunter2", "123456789", "987654321", "brand-new-value"]) {
      expect(text).not.toContain(value);
    }
  });

  it("stops at the limit, so a huge mismatch cannot make a huge response", () => {
    const before: Record<string, Json> = {};
    const after: Record<string, Json> = {};
    for (let i = 0; i < 500; i++) {
      before[`k${i}`] = i;
      after[`k${i}`] = i + 1;
    }
    expect(diffPaths(before, after)).toHaveLength(50);
    expect(diffPaths(before, after, "args", 3)).toHaveLength(3);
  });

  it("uses the base it is given for the root path", () => {
    expect(diffPaths({ a: 1 }, { a: 2 }, "body")).toEqual(["body.a"]);
    expect(diffPaths(1, 2)).toEqual(["args"]);
  });
});

describe("shortPair (the values a near-duplicate approval shows)", () => {
  it("shows short values whole, and cuts long ones around where they start to differ", () => {
    expect(shortPair(1200, 1250)).toEqual({ here: "1200", there: "1250" });
    expect(shortPair(undefined, "x")).toEqual({ here: "(absent)", there: '"x"' });
    const common = "Roll out the new invoice rounding to all EU customers after the freeze ends on Monday, then";
    const pair = shortPair(`${common} tell support.`, `${common} tell finance.`);
    expect(pair.here).not.toBe(pair.there);
    expect(pair.here.startsWith("…")).toBe(true);
    expect(pair.here).toContain("tell support");
    expect(pair.there).toContain("tell finance");
  });

  it("shows a value that fits whole, and fills the window when the difference is near the end", () => {
    const fits = `${"1".repeat(40)}-1`;
    expect(shortPair(fits, `${"1".repeat(40)}-2`)).toEqual({ here: JSON.stringify(fits), there: JSON.stringify(`${"1".repeat(40)}-2`) });
    const long = `${"x".repeat(80)}, ticket 1`;
    const pair = shortPair(long, `${"x".repeat(80)}, ticket 2`);
    expect([...pair.here].length).toBe(60);
    expect(pair.here.endsWith('ticket 1"')).toBe(true);
    expect(pair.there.endsWith('ticket 2"')).toBe(true);
  });

  it("never splits a family emoji (one visible character of several code points)", () => {
    const family = "👨‍👩‍👧‍👦";
    const pair = shortPair(`${"x".repeat(35)}${family}${"y".repeat(40)}a`, `${"x".repeat(35)}${family}${"y".repeat(40)}b`);
    for (const text of [pair.here, pair.there]) expect(text.includes("\u200d👩") && !text.includes(family)).toBe(false);
  });

  it("never cuts a character in half", () => {
    const pair = shortPair("😀".repeat(80), `${"😀".repeat(79)}!`);
    for (const text of [pair.here, pair.there]) expect(text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });
});
