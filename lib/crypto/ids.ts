import { randomFillSync } from "node:crypto";

// Random bytes drawn 4 KiB at a time: every claim makes an id, and one call into the CSPRNG per
// 256 ids is much cheaper than one per id. Bytes are never handed out twice.
const pool = Buffer.alloc(4096);
let offset = pool.length;

// Opaque, URL-safe ids: a type prefix and 128 random bits.
export function newId(prefix: "ten" | "key" | "tool" | "op" | "att" | "usr" | "view" | "fx" | "sub"): string {
  if (offset + 16 > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString("base64url", offset, offset + 16);
  offset += 16;
  return `${prefix}_${id}`;
}
