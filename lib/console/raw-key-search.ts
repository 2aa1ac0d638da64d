import type { Db } from "@/lib/db";
import { sha256Hex } from "@/lib/crypto/digest";
import { searchSql } from "@/lib/console/list-operations";
import { isStorableText } from "@/lib/console/storable-text";

// A raw Idempotency-Key typed into the operations search (the page then offers to look it up)
// was kept as typed by "Save view": in the view, and in the saved-view audit row every member of
// the tenant reads. When the text is an Idempotency-Key of an operation of this tenant, and the
// search finds nothing by it as an id, downstream key, resource id or workflow id, the view keeps
// the key's digest instead: the same operation, found as the page's own lookup finds it. A key
// no operation was claimed under cannot be told from other text, and names nothing to protect.
// Text PostgreSQL cannot hold (a `%00` in the query) is no key either, and was a 500 here.
export async function rawKeyDigest(db: Db, tenantId: string, q: string): Promise<string | null> {
  const text = q.trim();
  if (text === "" || !isStorableText(text)) return null;
  const digest = sha256Hex(text);
  const [row] = await db.$queryRaw<{ isKey: boolean; isShown: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM operation WHERE tenant_id = ${tenantId} AND key_digest = ${digest}) AS "isKey",
      EXISTS (SELECT 1 FROM operation WHERE tenant_id = ${tenantId} AND ${searchSql(text)}) AS "isShown"`;
  return row?.isKey && !row.isShown ? digest : null;
}
