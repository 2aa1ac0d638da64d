// An upstream MCP server (stdio) for the gateway tests: its tools act on the fake provider at
// PROVIDER_URL, so a test counts real effects, not gateway answers. Plain JavaScript, so node
// starts it directly: the tests start it many times, and tsx costs ~0.6 s of CPU per start.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { createServer as createHttpServer } from "node:http";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const providerUrl = process.env.PROVIDER_URL ?? "";
let reads = 0;

/** @returns {Promise<{ id: string }>} */
async function createEffect(downstreamKey, body) {
  const res = await fetch(`${providerUrl}/effects`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ downstreamKey: typeof downstreamKey === "string" ? downstreamKey : "", ...body }),
  });
  return await res.json();
}

// Progress the way a long tool reports it, if the caller asked (a progressToken in _meta): a
// report as each 600 ms step starts. (Not one right before the answer: the SDK handles a
// notification a microtask after the message, but a response at once, so a client may drop a
// report that arrives just before the answer.)
async function reportProgress(extra, steps) {
  for (let step = 1; step <= steps; step += 1) {
    const progressToken = extra._meta?.progressToken;
    if (progressToken !== undefined) {
      await extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress: step, total: steps, message: `step ${step}` } });
    }
    await new Promise((resolve) => setTimeout(resolve, 600));
  }
}

function createServer() {
  const server = new McpServer({ name: "test-upstream", version: "1.0.0" }, { instructions: "Upstream instructions." });
  server.registerTool(
    "tickets.create",
    { description: "Open a ticket", inputSchema: { title: z.string() }, outputSchema: { ticket: z.string(), title: z.string() } },
    async ({ title }, extra) => {
    const effect = await createEffect(extra._meta?.["io.tollgate/downstream-key"], { title });
      return { content: [{ type: "text", text: `opened ${effect.id}` }], structuredContent: { ticket: effect.id, title } };
    },
  );

  // Takes an idempotencyKey of its own (as some tool servers do): the gateway passes the raw key on.
  server.registerTool("tickets.keyed", { inputSchema: { title: z.string(), idempotencyKey: z.string() } }, async ({ title, idempotencyKey }, extra) => {
    const effect = await createEffect(extra._meta?.["io.tollgate/downstream-key"], { title, upstreamKey: idempotencyKey });
    return { content: [{ type: "text", text: `opened ${effect.id}` }] };
  });

  // Acts, then answers too late for the gateway's timeout: the agent sees a timeout after the effect.
  server.registerTool("tickets.slow", { inputSchema: { title: z.string() } }, async ({ title }, extra) => {
    await createEffect(extra._meta?.["io.tollgate/downstream-key"], { title });
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    return { content: [{ type: "text", text: "done, but too late" }] };
  });

  // Acts, then takes longer than its one-second lease to answer: only the gateway's heartbeats keep it.
  server.registerTool("tickets.steady", { inputSchema: { title: z.string() } }, async ({ title }, extra) => {
    const effect = await createEffect(extra._meta?.["io.tollgate/downstream-key"], { title });
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    return { content: [{ type: "text", text: `opened ${effect.id} slowly` }] };
  });

  // Three 600 ms steps, each reported, then acts: 1.8 s in all, longer than the gateway's
  // one-second call timeout but never that long silent.
  server.registerTool("tickets.progress", { inputSchema: { title: z.string() } }, async ({ title }, extra) => {
    await reportProgress(extra, 3);
    const effect = await createEffect(extra._meta?.["io.tollgate/downstream-key"], { title });
    return { content: [{ type: "text", text: `opened ${effect.id} after 3 steps` }] };
  });

  // Two reported steps, then a last report right before the answer (which a client may drop).
  server.registerTool("tickets.scan", { annotations: { readOnlyHint: true } }, async (extra) => {
    await reportProgress(extra, 2);
    const progressToken = extra._meta?.progressToken;
    if (progressToken !== undefined) await extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress: 3, message: "done" } });
    return { content: [{ type: "text", text: "scanned" }] };
  });

  // Acts, then the server dies before answering.
  server.registerTool("tickets.crash", { inputSchema: { title: z.string() } }, async ({ title }, extra) => {
    await createEffect(extra._meta?.["io.tollgate/downstream-key"], { title });
    process.exit(3);
  });

  // Acts, and answers with text PostgreSQL cannot store (U+0000, as binary or terminal output has).
  server.registerTool("tickets.binary", { inputSchema: { title: z.string() } }, async ({ title }, extra) => {
    const effect = await createEffect(extra._meta?.["io.tollgate/downstream-key"], { title });
    return { content: [{ type: "text", text: `opened ${effect.id}\u0000(raw bytes follow)` }] };
  });

  server.registerTool("tickets.refused", { inputSchema: { title: z.string() } }, async () => ({
    content: [{ type: "text", text: "title rejected by the ticket system" }],
    isError: true,
    _meta: { "io.tollgate/outcome": "failed" },
  }));

  server.registerTool("tickets.vague", { inputSchema: { title: z.string() } }, async ({ title }, extra) => {
    await createEffect(extra._meta?.["io.tollgate/downstream-key"], { title });
    return { content: [{ type: "text", text: "the ticket system did not answer" }], isError: true };
  });

  server.registerTool("tickets.count", { annotations: { readOnlyHint: true } }, async () => {
    reads += 1;
    return { content: [{ type: "text", text: `read ${reads}` }] };
  });

  server.registerTool("payments.refund", { inputSchema: { amount: z.number() } }, async ({ amount }, extra) => {
    const effect = await createEffect(extra._meta?.["io.tollgate/downstream-key"], { amount });
    return { content: [{ type: "text", text: `refunded ${amount} as ${effect.id}` }] };
  });

  // Adds a tool at run time: the SDK tells connected clients that the list changed.
  server.registerTool("tickets.add-archive", {}, async () => {
    server.registerTool("tickets.archive", { inputSchema: { id: z.string() } }, async ({ id }) => ({ content: [{ type: "text", text: `archived ${id}` }] }));
    return { content: [{ type: "text", text: "archive tool added" }] };
  });

  server.registerTool("Tickets.Shout", { inputSchema: { title: z.string() } }, async () => ({ content: [{ type: "text", text: "never" }] }));
  return server;
}

// `--http`: a remote MCP server over Streamable HTTP (stateless: a server per request), which
// answers 401 unless the request carries EXPECTED_AUTHORIZATION; prints its port on stdout.
if (process.argv.includes("--http")) {
  const http = createHttpServer(async (req, res) => {
    if (req.headers.authorization !== process.env.EXPECTED_AUTHORIZATION) {
      res.writeHead(401).end();
      return;
    }
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const server = createServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined);
  });
  http.listen(0, "127.0.0.1", () => process.stdout.write(`listening ${http.address().port}\n`));
} else {
  await createServer().connect(new StdioServerTransport());
}
