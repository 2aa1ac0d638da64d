import { randomFillSync } from "node:crypto";

// Random bytes drawn 4 KiB at a time: every claim makes an id, and one call into the CSPRNG per
// 256 ids is much cheaper than one per id. Bytes are never handed out twice.
const pool = Buffer.alloc(4096);
let offset = pool.length;

// The pool offset of 16 fresh random bytes.
function takeRandom16(): number {
  if (offset + 16 > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  offset += 16;
  return offset - 16;
}

// Opaque, URL-safe ids: a type prefix and 128 random bits.
export function newId(prefix: "ten" | "key" | "tool" | "att" | "usr" | "view" | "fx" | "sub"): string {
  const at = takeRandom16();
  return `${prefix}_${pool.toString("base64url", at, at + 16)}`;
}

// Operation ids: 48 bits of milliseconds since the epoch, then 80 random bits, in the same 22
// URL-safe characters. The operation id leads the indexes every claim writes (the operation's
// primary key; attempts, audit events and side effects by operation): random ids sent each insert
// to a random leaf page of each, which at a million operations is rarely in PostgreSQL's cache.
// With the time first, the ids of the last few minutes share their first characters (the
// database compares them byte by byte) and their inserts stay on a few hot pages. 80 random bits
// keep ids unguessable and unique; an id tells when its operation was created, which its
// `createdAt` shows anyway. Nothing orders by id: it is not a clock.
export function newOperationId(now: number = Date.now()): string {
  // The time goes over the first 6 of the 16 bytes in place: they are never handed out again.
  const at = takeRandom16();
  pool.writeUIntBE(Math.max(0, Math.min(now, 2 ** 48 - 1)), at, 6);
  return `op_${pool.toString("base64url", at, at + 16)}`;
}
