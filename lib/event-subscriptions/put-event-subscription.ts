import type { Db } from "@/lib/db";
import { newId } from "@/lib/crypto/ids";
import { encryptSecret } from "@/lib/crypto/secret-box";
import { auditedSubscription } from "@/lib/event-subscriptions/redact-endpoint";
import { recordAudit } from "@/lib/audit/record-audit";
import { confirmActingAdmin } from "@/lib/users/acting-admin";
import { ProblemError } from "@/lib/http/problem";
import type { SubscriptionRequest, SubscriptionView } from "@/lib/event-subscriptions/event-subscription-schemas";
import { newSubscriptionSecret } from "@/lib/event-subscriptions/subscription-secret";
import { subscriptionView, type SubscriptionRow } from "@/lib/event-subscriptions/subscription-view";

// Creates or replaces an event subscription of the tenant: one atomic upsert (no
// check-then-insert) and its audit event in one transaction. A new subscription gets a signing
// secret, returned here once; replacing keeps the secret unless rotateSecret asks for a new one.
// A subscription that was deleted (DELETE disables the row, its deliveries stay on record) does
// not exist for the API, so a PUT of its name creates it again: a new secret, 201, "created".
// It is the same row, its old deliveries still on it: its created_at, set anew, tells them apart
// (tollgate_redeliver refuses one made before it: for an earlier subscription of the name). The
// clock's time, read once the row is locked, not the transaction's start (now()): the removal
// committed before that lock was had, and any delivery for the removed subscription was made by a
// transaction that read it live, so before that, even when this transaction began earlier.
export async function putEventSubscription(options: {
  db: Db;
  tenantId: string;
  name: string;
  input: SubscriptionRequest;
  actor: string;
  // The console's signed-in admin, read again in the transaction (lib/users/acting-admin.ts).
  admin?: { id: string };
  serverSecret?: string;
  // The console's forms, which know what they are doing (the API's PUT creates or replaces):
  // "create" is refused if a subscription of the name exists (it would be replaced, keeping a
  // secret the new receiver never got); { updatedAt } is an edit of the subscription as the form
  // showed it, refused if it was changed or removed since (saving would undo that unseen).
  expect?: "create" | { updatedAt: string };
}): Promise<{ created: boolean; subscription: SubscriptionView; secret?: string }> {
  const { db, tenantId, name, input, actor } = options;
  const secret = newSubscriptionSecret();
  const box = encryptSecret(secret, options.serverSecret);
  const rotate = input.rotateSecret ?? false;
  return db.$transaction(async (tx) => {
    if (options.admin) await confirmActingAdmin(tx, { id: options.admin.id, tenantId });
    const before = await tx.$queryRaw<(SubscriptionRow & { deleted: boolean })[]>`
      SELECT name, url, events, created_at AS "createdAt", updated_at AS "updatedAt", disabled_at IS NOT NULL AS deleted FROM event_subscription
      WHERE tenant_id = ${tenantId} AND name = ${name} FOR UPDATE`;
    const live = before[0] && !before[0].deleted ? before[0] : undefined;
    if (options.expect === "create" && live) {
      throw new ProblemError("invalid-state", `A subscription named ${name} exists already: edit it from its row, or choose another name.`);
    }
    if (options.expect !== undefined && options.expect !== "create" && live?.updatedAt.toISOString() !== options.expect.updatedAt) {
      throw new ProblemError(
        "invalid-state",
        live
          ? "This subscription was changed since you opened the form: close the form and open it again to edit it as it is now."
          : "This subscription was removed since you opened the form.",
      );
    }
    const revived = before[0]?.deleted ?? false;
    const newSecret = rotate || revived;
    const rows = await tx.$queryRaw<(SubscriptionRow & { inserted: boolean })[]>`
      INSERT INTO event_subscription (id, tenant_id, name, url, events, secret_encrypted)
      VALUES (${newId("sub")}, ${tenantId}, ${name}, ${input.url}, ${input.events}::text[], ${box})
      ON CONFLICT (tenant_id, name) DO UPDATE SET url = EXCLUDED.url, events = EXCLUDED.events, updated_at = now(), disabled_at = NULL,
        secret_encrypted = CASE WHEN ${newSecret} THEN EXCLUDED.secret_encrypted ELSE event_subscription.secret_encrypted END,
        created_at = CASE WHEN ${revived} THEN clock_timestamp() ELSE event_subscription.created_at END
      RETURNING name, url, events, created_at AS "createdAt", updated_at AS "updatedAt", (xmax = 0) AS inserted`;
    const row = rows[0];
    if (!row) throw new Error("event subscription upsert returned no row");
    const subscription = subscriptionView(row);
    const created = row.inserted || revived;
    await recordAudit(tx, {
      tenantId,
      actor,
      action: created ? "event_subscription.created" : "event_subscription.replaced",
      targetType: "event_subscription",
      targetId: name,
      before: before[0] && !revived ? auditedSubscription(subscriptionView(before[0])) : null,
      after: { ...auditedSubscription(subscription), secretRotated: !created && rotate },
    });
    return { created, subscription, ...(created || rotate ? { secret } : {}) };
  });
}
