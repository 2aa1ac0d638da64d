import { createLoader, createParser, createSerializer, parseAsStringLiteral, type inferParserType } from "nuqs/server";
import { parseAsStorableDateTime } from "@/lib/db/storable-date";
import { parseAsText } from "@/lib/console/text-param";

// The audit log's URL: filters and the keyset position, so a filtered view is a link.
// No Prisma here: the client filter bar uses these parsers too.

export const auditTargetTypes = ["operation", "api_key", "tool", "user", "tenant", "webhook_connection", "webhook_event"] as const;

// Actions the product writes today, offered as suggestions; the filter takes any prefix.
export const knownAuditActions = [
  "operation.",
  "operation.claimed",
  "operation.attempt_started",
  "operation.taken_over",
  "operation.retry_scheduled",
  "operation.completed",
  "operation.unknown",
  "operation.resolved",
  "operation.complete_conflict",
  "operation.complete_agreed",
  "operation.late_report_refused",
  "operation.attempt_lease_expired",
  "operation.webhook_conflict",
  "operation.webhook_matched",
  "operation.webhook_not_applied",
  "operation.flag_cleared",
  "side_effect.",
  "side_effect.late_report_refused",
  "webhook_event.",
  "webhook_event.matched",
  "webhook_event.ignored",
  "webhook_connection.",
  "approval.",
  "approval.approved",
  "approval.rejected",
  "approval.expired",
  "api_key.",
  "api_key.created",
  "api_key.revoked",
  "tool.",
  "tool.created",
  "tool.replaced",
  "user.",
  "user.created",
  "user.role_changed",
  "user.disabled",
  "user.enabled",
  "tenant.created",
] as const;

// Event ids are bigint: 19 digits reach past its maximum, which PostgreSQL refuses as a parameter.
const MAX_EVENT_ID = 9223372036854775807n;
const parseAsId = createParser({
  parse: (value: string) => (/^[1-9][0-9]{0,18}$/.test(value) && BigInt(value) <= MAX_EVENT_ID ? value : null),
  serialize: (value: string) => value,
});

export const auditQueryParsers = {
  action: parseAsText(100).withDefault(""),
  actor: parseAsText(300).withDefault(""),
  type: parseAsStringLiteral(auditTargetTypes),
  target: parseAsText(300).withDefault(""),
  from: parseAsStorableDateTime,
  to: parseAsStorableDateTime,
  // Keyset position: events older than `before`, or newer than `after` (ids, newest first).
  before: parseAsId,
  after: parseAsId,
};

export type AuditQuery = inferParserType<typeof auditQueryParsers>;
export const loadAuditQuery = createLoader(auditQueryParsers);
export const serializeAuditQuery = createSerializer(auditQueryParsers);

export function hasAuditFilters(q: AuditQuery): boolean {
  return Boolean(q.action || q.actor || q.type || q.target || q.from || q.to);
}
