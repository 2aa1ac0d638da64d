import { z } from "zod";
import type { Db } from "@/lib/db";
import { newId } from "@/lib/crypto/ids";
import { recordAudit } from "@/lib/audit/record-audit";
import { ProblemError } from "@/lib/http/problem";
import { loadOperationsQuery, viewQueryString } from "@/lib/console/operations-query";
import { rawKeyDigest } from "@/lib/console/raw-key-search";

// A person's named filters of the operations table, per tenant. Only the query string is kept,
// normalised through the table's own URL parsers, so a view is exactly a shareable link.

export type SavedView = { id: string; name: string; query: string; createdAt: Date };

export const MAX_SAVED_VIEWS = 50;

export const savedViewInput = z
  .object({
    name: z.string().trim().min(1, "name a view").max(80),
    query: z.string().max(4000),
  })
  .strict();

type Actor = { id: string; email: string };

export async function listSavedViews(options: { db: Db; tenantId: string; userId: string }): Promise<SavedView[]> {
  return options.db.savedView.findMany({
    where: { tenantId: options.tenantId, userId: options.userId },
    orderBy: { name: "asc" },
    select: { id: true, name: true, query: true, createdAt: true },
  });
}

// Saving under an existing name replaces that view's filters (the unique index on
// (tenant, user, name) decides), so "save" twice never makes two views of one name.
export async function saveView(options: { db: Db; tenantId: string; user: Actor; input: z.input<typeof savedViewInput> }): Promise<{ view: SavedView; replaced: boolean }> {
  const input = savedViewInput.parse(options.input);
  const typed = input.query.replace(/^\?/, "");
  const filters = loadOperationsQuery(typed);
  // The search as typed: the filters keep 200 characters of it, and a key may have 255.
  const digest = await rawKeyDigest(options.db, options.tenantId, new URLSearchParams(typed).get("q") ?? "");
  const query = viewQueryString(digest ? { ...filters, q: digest } : filters);
  const key = { tenantId: options.tenantId, userId: options.user.id, name: input.name };
  return options.db.$transaction(async (tx) => {
    // The person's row, locked first, serializes their saves (two tabs, two server instances):
    // otherwise two saves at 49 views each counted 49 and both stored, and two saves of one new
    // name both found nothing before them and both audited a creation. Each statement below
    // reads what the save before it committed.
    await tx.$queryRaw`SELECT 1 FROM app_user WHERE id = ${options.user.id} FOR NO KEY UPDATE`;
    const before = await tx.savedView.findUnique({ where: { tenantId_userId_name: key } });
    if (!before && (await tx.savedView.count({ where: { tenantId: key.tenantId, userId: key.userId } })) >= MAX_SAVED_VIEWS) {
      throw new ProblemError("invalid-request", `You have ${MAX_SAVED_VIEWS} saved views in this tenant; delete one first.`);
    }
    const view = await tx.savedView.upsert({
      where: { tenantId_userId_name: key },
      create: { id: newId("view"), ...key, query },
      update: { query },
      select: { id: true, name: true, query: true, createdAt: true },
    });
    await recordAudit(tx, {
      tenantId: options.tenantId,
      actor: `user:${options.user.email}`,
      action: before ? "saved-view.updated" : "saved-view.created",
      targetType: "saved_view",
      targetId: view.id,
      before: before ? { name: before.name, query: before.query } : null,
      after: { name: view.name, query: view.query },
    });
    return { view, replaced: Boolean(before) };
  });
}

// Only the owner deletes a view; anyone else's id is "not found", as if it did not exist.
export async function deleteSavedView(options: { db: Db; tenantId: string; user: Actor; id: string }): Promise<void> {
  await options.db.$transaction(async (tx) => {
    // One DELETE … RETURNING: of two deletes at once (a double click), the second finds nothing
    // and says so (it read the row, then failed to delete it: a 500).
    const [view] = await tx.$queryRaw<{ id: string; name: string; query: string }[]>`
      DELETE FROM saved_view WHERE id = ${options.id} AND tenant_id = ${options.tenantId} AND user_id = ${options.user.id}
      RETURNING id, name, query`;
    if (!view) throw new ProblemError("not-found", "No such saved view.");
    await recordAudit(tx, {
      tenantId: options.tenantId,
      actor: `user:${options.user.email}`,
      action: "saved-view.deleted",
      targetType: "saved_view",
      targetId: view.id,
      before: { name: view.name, query: view.query },
    });
  });
}
