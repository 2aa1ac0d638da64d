import { z } from "zod";
import {
  claimConflictProblemSchema,
  invalidRequestProblemSchema,
  keyReusedProblemSchema,
  payloadTooLargeProblemSchema,
  problemSchema,
  retryBackoffProblemSchema,
} from "@/lib/openapi/problem-schemas";
import {
  claimAwaitingApprovalSchema,
  claimCreatedSchema,
  claimRequestSchema,
  completeRequestSchema,
  heartbeatRequestSchema,
  heartbeatResponseSchema,
  operationViewSchema,
  replaySchema,
  resolveRequestSchema,
} from "@/lib/operations/operation-schemas";
import { approvalListSchema, approvalViewSchema, decisionRequestSchema } from "@/lib/approvals/approval-schemas";
import { toolDefinitionSchema } from "@/lib/tools/tool-schema";
import { webhookConnectionRequestSchema, webhookConnectionViewSchema, webhookIngestResponseSchema } from "@/lib/webhooks/webhook-schemas";
import { toolViewSchema } from "@/lib/tools/tool-view";
import { sideEffectRequestSchema, sideEffectViewSchema } from "@/lib/side-effects/side-effect-schemas";
import { eventTypes, subscriptionPutResponseSchema, subscriptionRequestSchema, subscriptionViewSchema } from "@/lib/event-subscriptions/event-subscription-schemas";

// OpenAPI 3.1 generated from the very zod schemas the handlers validate with: JSON Schema
// 2020-12 is OpenAPI 3.1's schema dialect, so zod's own converter is enough.
const input = (s: z.ZodType) => z.toJSONSchema(s, { io: "input", unrepresentable: "any" });
const output = (s: z.ZodType) => z.toJSONSchema(s, { io: "output", unrepresentable: "any" });

const json = (schema: object) => ({ content: { "application/json": { schema } } });
const problem = (description: string, schema = "Problem") => ({ description, content: { "application/problem+json": { schema: { $ref: `#/components/schemas/${schema}` } } } });
// The statuses whose problems carry fields of their own, wherever they are answered.
const problemByStatus: Record<string, string> = { "400": "InvalidRequestProblem", "413": "PayloadTooLargeProblem", "422": "KeyReusedProblem" };
const errors = (...codes: string[]) => Object.fromEntries(codes.map((c) => [c, problem(statusText[c] ?? "Error", problemByStatus[c])]));
const statusText: Record<string, string> = {
  "400": "Invalid request (invalid-json, invalid-request, idempotency-key-missing, idempotency-key-invalid)",
  "401": "Missing, unknown or revoked API key (unauthorized)",
  "403": "Not allowed (forbidden, approval-rejected, approval-mismatch)",
  "404": "Not found in your tenant",
  "409": "Conflict (operation-in-progress, outcome-unknown, lease-lost, already-resolved, invalid-state, approval-already-decided, approval-expired)",
  "413": "Body too large (payload-too-large)",
  "415": "Content-Type must be application/json",
  "422": "Idempotency-Key reused with different arguments",
  "429": "Retry backoff not over (retry-backoff)",
};
// Response headers the contract names (API review: the document listed none of them).
const header = (description: string, schema: object = { type: "string" }, required = true) => ({ description, required, schema });
const retryAfter = (required = true) => header("Seconds after which a retry may succeed (whole seconds, at least 1)", { type: "string", pattern: "^[1-9][0-9]*$" }, required);
const withHeaders = (response: object, headers: Record<string, object>) => ({ ...response, headers });
// A database that cannot serve the request (lib/db/database-unavailable.ts): a 503 with Retry-After,
// whose detail says whether it may have been recorded. What to do then differs: the hot path's
// requests are safe to repeat as they are; any other change is read back first.
const serviceUnavailable = (then: string) => ({
  "503": withHeaders(problem(`service-unavailable: the database could not serve the request now; the detail says whether it may have been recorded. ${then}`), {
    "Retry-After": retryAfter(),
  }),
});
const databaseUnavailable = serviceUnavailable("Repeat the same request after Retry-After");
const databaseUnavailableElsewhere = serviceUnavailable("Retry after Retry-After; if it may have been recorded, read what is stored before repeating a change");
const idParam = (name: string) => ({ name, in: "path", required: true, schema: { type: "string" } });
const security = [{ bearer: [] }];

export function buildOpenApi(): Record<string, unknown> {
  return withEveryRoutesHeaders({
    openapi: "3.1.0",
    info: { title: "Tollgate", version: "1.0.0", description: "Claim, lease, fence, complete, replay: AI-agent tool calls that are safe to retry." },
    servers: [{ url: "/" }],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: {
        Problem: output(problemSchema),
        InvalidRequestProblem: output(invalidRequestProblemSchema),
        ClaimConflictProblem: output(claimConflictProblemSchema),
        KeyReusedProblem: output(keyReusedProblemSchema),
        RetryBackoffProblem: output(retryBackoffProblemSchema),
        PayloadTooLargeProblem: output(payloadTooLargeProblemSchema),
        OperationView: output(operationViewSchema),
        ClaimCreated: output(claimCreatedSchema),
        ClaimAwaitingApproval: output(claimAwaitingApprovalSchema),
        Replay: output(replaySchema),
        Tool: output(toolViewSchema),
        Approval: output(approvalViewSchema),
        SideEffect: output(sideEffectViewSchema),
        EventSubscription: output(subscriptionViewSchema),
      },
    },
    paths: {
      "/api/v1/tools": {
        get: { summary: "List tools", security, responses: { "200": { description: "Tools", ...json({ type: "object", properties: { tools: { type: "array", items: { $ref: "#/components/schemas/Tool" } } }, required: ["tools"] }) }, ...errors("401", "403") } },
      },
      "/api/v1/tools/{name}": {
        parameters: [idParam("name")],
        put: {
          summary: "Create (201) or replace (200) a tool",
          security,
          requestBody: { required: true, ...json(input(toolDefinitionSchema)) },
          responses: { "200": { description: "Replaced", ...json({ $ref: "#/components/schemas/Tool" }) }, "201": { description: "Created", ...json({ $ref: "#/components/schemas/Tool" }) }, ...errors("400", "401", "403", "413", "415") },
        },
        get: { summary: "Read a tool", security, responses: { "200": { description: "The tool", ...json({ $ref: "#/components/schemas/Tool" }) }, ...errors("400", "401", "403", "404") } },
      },
      "/api/v1/operations": {
        post: {
          summary: "Claim an operation under an Idempotency-Key",
          security,
          parameters: [{ name: "Idempotency-Key", in: "header", required: true, schema: { type: "string", pattern: "^[\\x21-\\x7e]{1,255}$" } }],
          requestBody: { required: true, ...json(input(claimRequestSchema)) },
          responses: {
            "200": withHeaders(
              { description: "Stored result replayed (Idempotent-Replayed: true)", ...json({ $ref: "#/components/schemas/Replay" }) },
              { "Idempotent-Replayed": header("Always true on a replay", { const: "true" }) },
            ),
            "201": withHeaders(
              { description: "New attempt granted with a lease", ...json({ $ref: "#/components/schemas/ClaimCreated" }) },
              { Location: header("The operation: /api/v1/operations/{operationId}", { type: "string", pattern: "^/api/v1/operations/" }) },
            ),
            "202": withHeaders({ description: "Awaiting a person's approval", ...json({ $ref: "#/components/schemas/ClaimAwaitingApproval" }) }, { "Retry-After": retryAfter() }),
            ...errors("400", "401", "403", "404", "413", "415", "422"),
            "409": withHeaders(problem(statusText["409"]!, "ClaimConflictProblem"), { "Retry-After": retryAfter(false) }),
            "429": withHeaders(problem(statusText["429"]!, "RetryBackoffProblem"), { "Retry-After": retryAfter() }),
            ...databaseUnavailable,
          },
        },
        get: {
          summary: "Find your operation by tool and Idempotency-Key",
          security,
          parameters: [
            { name: "tool", in: "query", required: true, schema: { type: "string" } },
            { name: "idempotencyKey", in: "query", required: false, description: "The key, unless it is sent in the Idempotency-Key header", schema: { type: "string" } },
            { name: "Idempotency-Key", in: "header", required: false, description: "The key, kept out of URLs and access logs (preferred)", schema: { type: "string", pattern: "^[\\x21-\\x7e]{1,255}$" } },
          ],
          responses: { "200": { description: "Status view", ...json({ $ref: "#/components/schemas/OperationView" }) }, ...errors("400", "401", "403", "404") },
        },
      },
      "/api/v1/operations/{id}": {
        parameters: [idParam("id")],
        get: { summary: "Status view", security, responses: { "200": { description: "Status view", ...json({ $ref: "#/components/schemas/OperationView" }) }, ...errors("401", "403", "404") } },
      },
      "/api/v1/operations/{id}/heartbeat": {
        parameters: [idParam("id")],
        post: {
          summary: "Extend the lease",
          security,
          requestBody: { required: true, ...json(input(heartbeatRequestSchema)) },
          responses: { "200": { description: "New lease expiry", ...json(output(heartbeatResponseSchema)) }, ...errors("400", "401", "403", "404", "409", "413", "415"), ...databaseUnavailable },
        },
      },
      "/api/v1/operations/{id}/complete": {
        parameters: [idParam("id")],
        post: {
          summary: "Report the outcome",
          security,
          requestBody: { required: true, ...json(input(completeRequestSchema)) },
          responses: { "200": { description: "Status view", ...json({ $ref: "#/components/schemas/OperationView" }) }, ...errors("400", "401", "403", "404", "409", "413", "415"), ...databaseUnavailable },
        },
      },
      "/api/v1/operations/{id}/resolve": {
        parameters: [idParam("id")],
        post: {
          summary: "Operator: settle an unknown outcome",
          security,
          requestBody: { required: true, ...json(input(resolveRequestSchema)) },
          responses: { "200": { description: "Status view", ...json({ $ref: "#/components/schemas/OperationView" }) }, ...errors("400", "401", "403", "404", "409", "413", "415") },
        },
      },
      "/api/v1/approvals": {
        get: {
          summary: "Approver: the pending queue (oldest first) or decided approvals (newest first)",
          security,
          parameters: [
            { name: "state", in: "query", required: false, schema: { type: "string", enum: ["pending", "approved", "rejected", "expired", "decided"], default: "pending" } },
            { name: "limit", in: "query", required: false, schema: { type: "integer", minimum: 1, maximum: 200, default: 50 } },
            { name: "cursor", in: "query", required: false, schema: { type: "string" }, description: "nextCursor of the previous page" },
          ],
          responses: { "200": { description: "Approvals", ...json(output(approvalListSchema)) }, ...errors("400", "401", "403") },
        },
      },
      "/api/v1/approvals/{id}": {
        parameters: [idParam("id")],
        get: { summary: "Approver: one approval and the exact args it covers", security, responses: { "200": { description: "The approval", ...json({ $ref: "#/components/schemas/Approval" }) }, ...errors("401", "403", "404") } },
      },
      "/api/v1/approvals/{id}/decision": {
        parameters: [idParam("id")],
        post: {
          summary: "Approver: approve (the operation becomes pending) or reject (reason required)",
          security,
          requestBody: { required: true, ...json(input(decisionRequestSchema)) },
          responses: {
            "200": { description: "The decided approval", ...json({ $ref: "#/components/schemas/Approval" }) },
            ...errors("400", "401", "403", "404", "409", "413", "415"),
          },
        },
      },
      "/api/v1/webhook-connections/{name}": {
        parameters: [idParam("name")],
        put: {
          summary: "Create (201) or replace (200) a provider's webhook connection; secrets are never returned",
          security,
          requestBody: { required: true, ...json(input(webhookConnectionRequestSchema)) },
          responses: {
            "200": { description: "Replaced", ...json(output(webhookConnectionViewSchema)) },
            "201": { description: "Created", ...json(output(webhookConnectionViewSchema)) },
            ...errors("400", "401", "403", "413", "415"),
          },
        },
        get: { summary: "Read a webhook connection (never its secrets)", security, responses: { "200": { description: "The connection", ...json(output(webhookConnectionViewSchema)) }, ...errors("400", "401", "403", "404") } },
      },
      "/api/v1/webhooks/{connectionId}": {
        parameters: [idParam("connectionId")],
        post: {
          summary: "A provider's signed event (Standard Webhooks or Stripe signature; no API key)",
          // The signature headers of the connection's scheme; which ones apply depends on it, so
          // none is required here (a missing one is a 400 invalid-signature).
          parameters: ["webhook-id", "webhook-timestamp", "webhook-signature", "Stripe-Signature"].map((name) => ({
            name,
            in: "header",
            required: false,
            schema: { type: "string" },
            description: name === "Stripe-Signature" ? "scheme stripe: t=…,v1=…" : "scheme standard-webhooks",
          })),
          requestBody: { required: true, ...json({ type: "object", description: "The provider's event, verified over its raw bytes" }) },
          responses: {
            "200": { description: "Stored (status says what it did) or a duplicate delivery", ...json(output(webhookIngestResponseSchema)) },
            "400": problem("invalid-signature (bad or missing signature, timestamp outside tolerance), invalid-json, invalid-request"),
            ...errors("404", "413", "415"),
            "503": withHeaders(problem("service-unavailable: the connection changed twice during the delivery, or the database could not serve it now; retry after Retry-After"), { "Retry-After": retryAfter() }),
          },
        },
      },
      "/api/v1/operations/{id}/side-effects/{name}": {
        parameters: [idParam("id"), idParam("name")],
        put: {
          summary: "Lease holder: record a provider call (intent first, then sent / confirmed / failed / unknown); returns the effect's downstream key",
          security,
          requestBody: { required: true, ...json(input(sideEffectRequestSchema)) },
          responses: {
            "200": { description: "The side effect as recorded (a repeat changes nothing)", ...json({ $ref: "#/components/schemas/SideEffect" }) },
            ...errors("400", "401", "403", "404", "409", "413", "415"),
          },
        },
      },
      "/api/v1/event-subscriptions": {
        get: {
          summary: "List event subscriptions (never their secrets)",
          security,
          responses: { "200": { description: "Subscriptions", ...json({ type: "object", properties: { subscriptions: { type: "array", items: { $ref: "#/components/schemas/EventSubscription" } } }, required: ["subscriptions"] }) }, ...errors("401", "403") },
        },
      },
      "/api/v1/event-subscriptions/{name}": {
        parameters: [idParam("name")],
        put: {
          summary: "Create (201, with the signing secret, shown once) or replace (200) an event subscription",
          security,
          requestBody: { required: true, ...json(input(subscriptionRequestSchema)) },
          responses: {
            "200": { description: "Replaced (the secret only when rotateSecret was set)", ...json(output(subscriptionPutResponseSchema)) },
            "201": { description: "Created, with its secret", ...json(output(subscriptionPutResponseSchema)) },
            ...errors("400", "401", "403", "413", "415"),
          },
        },
        get: { summary: "Read an event subscription", security, responses: { "200": { description: "The subscription", ...json({ $ref: "#/components/schemas/EventSubscription" }) }, ...errors("400", "401", "403", "404") } },
        delete: { summary: "Stop deliveries to a subscription (its history is kept)", security, responses: { "204": { description: "Removed" }, ...errors("400", "401", "403", "404") } },
      },
      "/api/health": { get: { summary: "Readiness (database answers)", responses: { "200": { description: "Ready" }, "503": withHeaders(problem("Database down"), { "Retry-After": retryAfter() }) } } },
      "/api/live": { get: { summary: "Liveness", responses: { "200": { description: "Alive" } } } },
    },
    // What Tollgate POSTs to event subscriptions (OpenAPI 3.1 webhooks).
    webhooks: Object.fromEntries(eventTypes.map((type) => [type, outgoingEvent(type)])),
  });
}

// What every route answers alike: a 401 names the scheme (WWW-Authenticate: Bearer). (A method a
// route does not serve is a problem+json 405 with Allow, lib/http/method-not-allowed.ts; OpenAPI
// describes only the methods a path has, so it is in the README, not here.)
function withEveryRoutesHeaders(doc: { paths: Record<string, Record<string, unknown>> } & Record<string, unknown>) {
  const methods = ["get", "put", "post", "delete", "patch"];
  for (const item of Object.values(doc.paths)) {
    for (const method of methods) {
      const operation = item[method] as { responses?: Record<string, object> } | undefined;
      if (!operation?.responses) continue;
      const unauthorized = operation.responses["401"];
      if (unauthorized) operation.responses["401"] = withHeaders(unauthorized, { "WWW-Authenticate": header('Bearer realm="tollgate"') });
      // Every route that authenticates reads the database, and answers 503 when it cannot (lib/http/handle-errors.ts).
      if (unauthorized && !operation.responses["503"]) operation.responses = { ...operation.responses, ...databaseUnavailableElsewhere };
    }
  }
  return doc;
}

// Standard Webhooks: headers webhook-id (the event id, the same on every retry), webhook-timestamp,
// webhook-signature (v1,<base64 HMAC-SHA256> under the subscription's secret); a 2xx acknowledges.
function outgoingEvent(type: string) {
  const header = (name: string, description: string) => ({ name, in: "header", required: true, description, schema: { type: "string" } });
  return {
    post: {
      summary: `${type}, delivered at least once, signed with Standard Webhooks`,
      parameters: [
        header("webhook-id", "The event id (msg_…): the same on every retry and redelivery, so receivers can dedupe"),
        header("webhook-timestamp", "Seconds since the epoch when this try was signed"),
        header("webhook-signature", "v1,<base64 HMAC-SHA256 of id.timestamp.body> under the subscription secret"),
      ],
      requestBody: {
        required: true,
        ...json({
          type: "object",
          properties: {
            type: { const: type },
            timestamp: { type: "string", description: "When the event happened (RFC 3339), the same on every try" },
            data: { type: "object", description: "operation.*: { operation, previousState[, resolution] }; approval.*: { approval, operation }; webhook.unmatched: { webhookEvent }" },
          },
          required: ["type", "timestamp", "data"],
        }),
      },
      responses: { "2XX": { description: "Received; anything else (or no answer within 10 s) is retried with backoff for 24 h" } },
    },
  };
}
