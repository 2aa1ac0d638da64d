import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

// A stand-in for the downstream provider a tool executor calls (the ticket system, the
// payment API). Tests count the business effects it recorded, not only Tollgate's status
// codes. With `dedupe`, it behaves like a provider that honours an idempotency key: a second
// POST with the same downstreamKey answers with the first effect and records nothing new,
// which is what the `takeover: "deduplicated"` policy relies on.
export type Effect = { id: string; downstreamKey: string; body: Record<string, unknown>; receivedAt: string };

export type FakeProvider = {
  url: string;
  effects: () => Effect[];
  // Every POST, including the ones a deduping provider answered without a new effect.
  requests: () => number;
  // GET /effects/by-key/{key} lookups (reconciliation probes).
  lookups: () => number;
  // The request headers of each lookup, in order (a probe's credentials arrive here).
  lookupHeaders: () => IncomingMessage["headers"][];
  stop: () => Promise<void>;
};

export async function startFakeProvider(options: { dedupe?: boolean } = {}): Promise<FakeProvider> {
  const effects: Effect[] = [];
  let requests = 0;
  let lookups = 0;
  const lookupHeaders: IncomingMessage["headers"][] = [];

  const server = createServer((req, res) => {
    void handle(req, res).catch(() => send(res, 500, { error: "fake provider failed" }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A read-only status lookup by key, as reconciliation probes use: 404 when no effect has it.
    const lookup = /^\/effects\/by-key\/([^/?]+)$/.exec(req.url ?? "");
    if (lookup && req.method === "GET") {
      lookups += 1;
      lookupHeaders.push(req.headers);
      const effect = effects.find((e) => e.downstreamKey === decodeURIComponent(lookup[1] ?? ""));
      return effect ? send(res, 200, { effect }) : send(res, 404, { error: "no effect with this key" });
    }
    if (req.url !== "/effects") return send(res, 404, { error: "not found" });
    if (req.method === "GET") return send(res, 200, { effects });
    if (req.method !== "POST") return send(res, 405, { error: "method not allowed" });
    requests += 1;
    const body = await readBody(req);
    if (!body || typeof body.downstreamKey !== "string" || body.downstreamKey === "") {
      return send(res, 400, { error: "downstreamKey is required" });
    }
    const earlier = options.dedupe ? effects.find((e) => e.downstreamKey === body.downstreamKey) : undefined;
    if (earlier) return send(res, 200, { ...earlier, duplicate: true });
    const effect: Effect = { id: `fx_${effects.length + 1}`, downstreamKey: body.downstreamKey, body, receivedAt: new Date().toISOString() };
    effects.push(effect);
    return send(res, 201, { ...effect, duplicate: false });
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    effects: () => [...effects],
    requests: () => requests,
    lookups: () => lookups,
    lookupHeaders: () => [...lookupHeaders],
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// What an executor does with its downstreamKey once Tollgate granted it the lease.
export async function callProvider(
  provider: FakeProvider,
  payload: { downstreamKey: string } & Record<string, unknown>,
): Promise<{ status: number; effect: Effect & { duplicate: boolean } }> {
  const res = await fetch(`${provider.url}/effects`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(payload),
  });
  return { status: res.status, effect: (await res.json()) as Effect & { duplicate: boolean } };
}

async function readBody(req: IncomingMessage): Promise<(Record<string, unknown> & { downstreamKey?: unknown }) | null> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    const parsed = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
