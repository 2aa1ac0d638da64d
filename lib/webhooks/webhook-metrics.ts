import { Counter } from "prom-client";
import { metrics } from "@/lib/metrics/registry";

// Webhook counters on the process's one registry (/api/metrics), kept on globalThis like it.
type WebhookMetrics = { deliveries: Counter<"result"> };
const globalForMetrics = globalThis as unknown as { tollgateWebhookMetrics?: WebhookMetrics };

export function webhookMetrics(): WebhookMetrics {
  globalForMetrics.tollgateWebhookMetrics ??= {
    deliveries: new Counter({
      name: "tollgate_webhook_deliveries_total",
      help: "Webhook deliveries by result: the stored event's status, duplicate, or why it was refused (invalid-signature:<why>, not-found, invalid-payload)",
      labelNames: ["result"] as const,
      registers: [metrics().registry],
    }),
  };
  return globalForMetrics.tollgateWebhookMetrics;
}
