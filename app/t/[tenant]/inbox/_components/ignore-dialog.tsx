"use client";

import type { InboxEvent } from "@/lib/console/webhook-inbox";
import { ReasonDialog } from "../../_components/reason-dialog";
import type { Done } from "./inbox-list";

// Ignore an inbox event: it needs no action (a test event, a provider's unrelated object). A
// reason is required, here and on the server; the audit log keeps it.
export function IgnoreDialog({ tenant, event, actor, onClose, onDone }: { tenant: string; event: InboxEvent; actor: string; onClose: () => void; onDone: (d: Done) => void }) {
  return (
    <ReasonDialog
      title="Ignore webhook event"
      description={
        <>
          <code>{event.eventType || "(no type)"}</code> from {event.connectionName} (<code>{event.id}</code>)
        </>
      }
      placeholder="Why no operation needs this event"
      missing="A reason is required: say why this event needs no action."
      url={`/api/console/${encodeURIComponent(tenant)}/webhook-events/${encodeURIComponent(event.id)}/ignore`}
      label="Ignore event"
      busyLabel="Ignoring…"
      actor={actor}
      onClose={onClose}
      onDone={() => onDone({ kind: "ignored", eventId: event.id })}
    />
  );
}
