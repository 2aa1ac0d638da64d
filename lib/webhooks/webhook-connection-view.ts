import type { WebhookConnectionView, WebhookScheme } from "@/lib/webhooks/webhook-schemas";

// A webhook_connection row as the raw SQL of this module selects it.
export type WebhookConnectionRow = {
  id: string;
  tenant_id: string;
  name: string;
  scheme: "standard_webhooks" | "stripe";
  secrets_encrypted: string[];
  tolerance_seconds: number;
  correlation_path: string;
  outcomes: Record<string, "succeeded" | "failed">;
  payload_retention_days: number;
  created_at: Date;
  updated_at: Date;
};

export const schemeFromDb = (s: WebhookConnectionRow["scheme"]): WebhookScheme => (s === "stripe" ? "stripe" : "standard-webhooks");
export const schemeToDb = (s: WebhookScheme): WebhookConnectionRow["scheme"] => (s === "stripe" ? "stripe" : "standard_webhooks");

export function webhookEndpointPath(connectionId: string): string {
  return `/api/v1/webhooks/${connectionId}`;
}

// Never the secrets, not even encrypted: only how many there are.
export function webhookConnectionView(row: WebhookConnectionRow, origin: string): WebhookConnectionView {
  return {
    name: row.name,
    connectionId: row.id,
    endpointUrl: new URL(webhookEndpointPath(row.id), origin).toString(),
    scheme: schemeFromDb(row.scheme),
    secretCount: row.secrets_encrypted.length,
    toleranceSeconds: row.tolerance_seconds,
    correlation: { path: row.correlation_path },
    outcomes: row.outcomes,
    payloadRetentionDays: row.payload_retention_days,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
