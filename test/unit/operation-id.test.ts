import { describe, expect, it } from "vitest";
import { newId, newOperationId } from "@/lib/crypto/ids";

// Operation ids lead with their creation time so that a claim's inserts land on a few hot index
// pages (see lib/crypto/ids.ts); the rest stays random and the format stays that of every id.
const timeOf = (id: string) => Buffer.from(id.slice(3), "base64url").readUIntBE(0, 6);

describe("newOperationId", () => {
  it("is op_ and 22 URL-safe characters, like every id, and carries its creation time in milliseconds", () => {
    const id = newOperationId(Date.UTC(2026, 10, 30, 16, 0, 0, 123));
    expect(id).toMatch(/^op_[A-Za-z0-9_-]{22}$/);
    expect(newId("att")).toMatch(/^att_[A-Za-z0-9_-]{22}$/);
    expect(timeOf(id)).toBe(Date.UTC(2026, 10, 30, 16, 0, 0, 123));
  });

  it("ids made within minutes share their first characters and differ in the random rest", () => {
    // 48 bits of time in 8 characters, 6 bits each: the first 5 change every 2^18 ms (≈ 4.4 min).
    const now = Math.floor(Date.UTC(2026, 10, 30, 16, 0, 0) / 2 ** 18) * 2 ** 18;
    const ids = Array.from({ length: 1000 }, (_, i) => newOperationId(now + i * 200));
    expect(new Set(ids.map((id) => id.slice(0, 3 + 5))).size).toBe(1);
    expect(new Set(ids).size).toBe(1000);
    const sameMs = Array.from({ length: 1000 }, () => newOperationId(now));
    expect(new Set(sameMs).size).toBe(1000);
    // 80 random bits after the time: no two tails alike.
    expect(new Set(sameMs.map((id) => id.slice(11))).size).toBe(1000);
  });
});
