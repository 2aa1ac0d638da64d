import { IntentLink } from "@/components/ui/intent-link";
import { db } from "@/lib/db";
import { requireConsole } from "@/lib/auth/require-console";
import { can } from "@/lib/auth/roles";
import { eventTypes } from "@/lib/event-subscriptions/event-subscription-schemas";
import { redactEndpoint } from "@/lib/event-subscriptions/redact-endpoint";
import { listEventSubscriptions } from "@/lib/event-subscriptions/get-event-subscription";
import { countDeliveries, listDeliveries, type DeliveryListItem, type RedeliverBlock } from "@/lib/outbox/list-deliveries";
import { EmptyState } from "@/components/ui/empty-state";
import { PageHeader } from "@/components/ui/page-header";
import { TimeAgo } from "@/components/ui/time-ago";
import { SubscriptionButton } from "./_components/subscription-button";
import { RedeliverButton } from "./_components/redeliver-button";
import type { Metadata } from "next";

export const metadata: Metadata = { title: "Subscriptions" };

export const dynamic = "force-dynamic";

const badge = { pending: "s-pending", delivered: "s-succeeded", dead: "s-failed" } as const;

// Why a delivery has no Redeliver button (the same conditions tollgate_redeliver refuses on).
const blockNote: Record<RedeliverBlock, string> = {
  "subscription-removed": "removed",
  "earlier-subscription": "an earlier subscription of this name (removed)",
  "not-subscribed": "no longer subscribed to this event",
};

// GET /t/{tenant}/subscriptions – where this tenant's events go, what was delivered, and what died (with redeliver)
export default async function SubscriptionsPage({ params }: { params: Promise<{ tenant: string }> }) {
  const { user, tenant } = await requireConsole((await params).tenant);
  const admin = can(user.role, "administer");
  const [subscriptions, counts, dead, recent] = await Promise.all([
    listEventSubscriptions({ db: db(), tenantId: tenant.id }),
    countDeliveries({ db: db(), tenantId: tenant.id }),
    listDeliveries({ db: db(), tenantId: tenant.id, state: "dead", limit: 50 }),
    listDeliveries({ db: db(), tenantId: tenant.id, limit: 50 }),
  ]);
  const now = Date.now();
  const base = `/t/${tenant.slug}`;
  return (
    <>
      <PageHeader
        title="Event subscriptions"
        description={
          <>
            Operation, approval and webhook events are written with the change they report and POSTed to these endpoints at least once, signed with Standard
            Webhooks; failures are retried with backoff for 24 h, then the delivery is dead. {counts.pending} pending · {counts.delivered} delivered ·{" "}
            <span className={counts.dead ? "danger-text" : undefined}>{counts.dead} dead</span>.
          </>
        }
        actions={admin ? <SubscriptionButton tenant={tenant.slug} eventTypes={eventTypes} /> : null}
      />
      {subscriptions.length === 0 ? (
        <EmptyState title="No subscriptions yet">Subscribe an endpoint (a pager, a chat bot, your own service) to the events it should hear about.</EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="data subscriptions-table">
            <caption className="visually-hidden">Event subscriptions of this tenant</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Endpoint</th>
                <th scope="col">Events</th>
                <th scope="col">Changed</th>
                {admin ? (
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {subscriptions.map((s) => (
                <tr key={s.name} id={`subscription-${s.name}`}>
                  <td>
                    <strong>{s.name}</strong>
                  </td>
                  <td>
                    <code>{admin ? s.url : redactEndpoint(s.url)}</code>
                  </td>
                  <td className="tools-cell">
                    {s.events.map((e) => (
                      <code key={e}>{e}</code>
                    ))}
                  </td>
                  <td>
                    <TimeAgo at={s.updatedAt} now={now} />
                  </td>
                  {admin ? (
                    <td>
                      <SubscriptionButton tenant={tenant.slug} eventTypes={eventTypes} existing={{ name: s.name, url: s.url, events: s.events, updatedAt: s.updatedAt }} />
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      <h2 className="section-title" style={{ marginTop: 20 }}>
        Dead deliveries
      </h2>
      {dead.length === 0 ? (
        <p className="muted small" role="status">
          None: every event reached its endpoint or is still being retried.
        </p>
      ) : (
        <DeliveryTable caption="Dead deliveries" rows={dead} now={now} base={base} tenant={tenant.slug} redeliver={admin} />
      )}

      <h2 className="section-title" style={{ marginTop: 20 }}>
        Recent deliveries
      </h2>
      {recent.length === 0 ? (
        <p className="muted small" role="status">
          No events yet.
        </p>
      ) : (
        <DeliveryTable caption="Recent deliveries" rows={recent} now={now} base={base} tenant={tenant.slug} redeliver={false} />
      )}
    </>
  );
}

function DeliveryTable({ caption, rows, now, base, tenant, redeliver }: { caption: string; rows: DeliveryListItem[]; now: number; base: string; tenant: string; redeliver: boolean }) {
  return (
    <div className="table-wrap">
      <table className="data deliveries-table" aria-label={caption}>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Subscription</th>
            <th scope="col">State</th>
            <th scope="col">Tries</th>
            <th scope="col">Last answer</th>
            <th scope="col">When</th>
            <th scope="col">Operation</th>
            {redeliver ? (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {rows.map((d) => (
            <tr key={d.id} data-delivery={d.id}>
              <td>
                <code>{d.type}</code>
                <div className="muted small" title="webhook-id: the same on every try">
                  {d.eventId}
                </div>
              </td>
              <td>
                {d.subscription}
                {d.redeliverBlock ? <div className="muted small">{blockNote[d.redeliverBlock]}</div> : null}
              </td>
              <td>
                <span className={`badge ${badge[d.state]}`}>{d.state}</span>
              </td>
              <td>{d.attempts}</td>
              <td className="small">{d.lastStatus ? `HTTP ${d.lastStatus}` : d.lastError ? <span title={d.lastError}>{d.lastError.slice(0, 60)}</span> : <span className="muted">—</span>}</td>
              <td className="small">
                {d.state === "delivered" ? (
                  <>
                    delivered <TimeAgo at={d.deliveredAt} now={now} />
                  </>
                ) : d.state === "dead" ? (
                  <>
                    died <TimeAgo at={d.deadAt} now={now} />
                  </>
                ) : (
                  <>
                    next try <TimeAgo at={d.nextAttemptAt} now={now} />
                  </>
                )}
              </td>
              <td>{d.operationId ? <IntentLink href={`${base}/operations/${d.operationId}`}>{d.operationId.slice(0, 14)}…</IntentLink> : <span className="muted">—</span>}</td>
              {redeliver ? (
                <td>{d.redeliverBlock ? null : <RedeliverButton tenant={tenant} id={d.id} label={`${d.type} to ${d.subscription}`} />}</td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
