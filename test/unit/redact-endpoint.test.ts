import { describe, expect, it } from "vitest";
import { redactEndpoint } from "@/lib/event-subscriptions/redact-endpoint";

describe("an endpoint URL as non-admins and the audit log see it", () => {
  it.each([
    ["https://hooks.slack.com/services/T000/B000/XXXXSECRET", "https://hooks.slack.com/services/…"],
    ["https://discord.com/api/webhooks/123/token-abc", "https://discord.com/api/…"],
    ["https://ops.example.com/hook?token=abc", "https://ops.example.com/hook/…"],
    ["https://user:pass@ops.example.com/hook", "https://ops.example.com/hook/…"],
    ["https://ops.example.com/?key=1", "https://ops.example.com/…"],
    ["https://ops.example.com/hook", "https://ops.example.com/hook"],
    ["https://ops.example.com:8443/", "https://ops.example.com:8443/"],
    ["https://webhook.site/1f0c6a9e-8d7b-4c2a-9e3f-5b6a7c8d9e0f", "https://webhook.site/…"],
    ["https://ops.example.com/t0ken-123", "https://ops.example.com/…"],
    ["https://ops.example.com/hook/", "https://ops.example.com/hook/…"],
    ["not a url", "[redacted]"],
  ])("%s → %s", (url, shown) => {
    expect(redactEndpoint(url)).toBe(shown);
  });
});
