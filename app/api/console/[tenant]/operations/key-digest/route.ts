import { z } from "zod";
import { sha256Hex } from "@/lib/crypto/digest";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withConsoleUser } from "@/lib/http/with-console-user";
import { otherMethods } from "@/lib/http/method-not-allowed";
import { idempotencyKeyPattern } from "@/lib/operations/operation-schemas";

export const dynamic = "force-dynamic";

const bodySchema = z
  .object({ idempotencyKey: z.string().regex(idempotencyKeyPattern, "must be 1 to 255 visible ASCII characters, as in the Idempotency-Key header") })
  .strict();

// POST /api/console/{tenant}/operations/key-digest – the digest Tollgate stores for a raw Idempotency-Key, so an
// operator holding the key from an agent's log can find its operations. A POST: the raw key stays out of URLs,
// browser history, saved views and the request log (which records a digest, never a body); nothing is stored.
export const POST = withConsoleUser<{ tenant: string }>(
  { route: "/api/console/{tenant}/operations/key-digest", capability: "read" },
  async ({ req }) => {
    const { idempotencyKey } = bodySchema.parse(await readJson(req, { maxBytes: 4 * KiB }));
    return json({ keyDigest: sha256Hex(idempotencyKey) });
  },
);

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/console/{tenant}/operations/key-digest", ["POST"]);
