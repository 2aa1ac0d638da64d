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
    ["not a url", "[redacted]"],
  ])("%s → %s", (url, shown) => {
    expect(redactEndpoint(url)).toBe(shown);
  });
});
