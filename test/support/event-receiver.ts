import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

// A subscriber's endpoint: records every delivery it receives (headers, raw body) and answers as
// the test says: a status, or "hang" (keep the request open until released or the server stops).
export type Received = { webhookId: string; timestamp: string; signature: string; raw: string; body: any; at: number }; // eslint-disable-line @typescript-eslint/no-explicit-any
export type Answer = number | "hang";

export type EventReceiver = {
  url: string;
  received: () => Received[];
  // Decides each answer; `n` counts the requests so far (1-based).
  answer: (decide: (req: Received, n: number) => Answer | Promise<Answer>) => void;
  releaseHung: (status?: number) => void;
  hung: () => number;
  // True when the delivery carries a valid Standard Webhooks signature for this secret.
  verify: (r: Received, secret: string) => boolean;
  stop: () => Promise<void>;
};

export async function startEventReceiver(): Promise<EventReceiver> {
  const received: Received[] = [];
  let decide: (req: Received, n: number) => Answer | Promise<Answer> = () => 200;
  const hanging: ServerResponse[] = [];

  const server = createServer((req, res) => {
    void handle(req, res).catch(() => send(res, 500));
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    let body: unknown = null;
    try {
      body = JSON.parse(raw);
    } catch {
      body = null;
    }
    const r: Received = {
      webhookId: String(req.headers["webhook-id"] ?? ""),
      timestamp: String(req.headers["webhook-timestamp"] ?? ""),
      signature: String(req.headers["webhook-signature"] ?? ""),
      raw,
      body,
      at: Date.now(),
    };
    received.push(r);
    const answer = await decide(r, received.length);
    if (answer === "hang") {
      hanging.push(res);
      return;
    }
    send(res, answer);
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    // A token in the path, as Slack's and Discord's hook URLs carry theirs: only admins see it.
    url: `http://127.0.0.1:${port}/hooks/t0ken-${port}`,
    received: () => [...received],
    answer: (fn) => {
      decide = fn;
    },
    releaseHung: (status = 200) => {
      for (const res of hanging.splice(0)) send(res, status);
    },
    hung: () => hanging.length,
    verify: (r, secret) => {
      try {
        new Webhook(secret).verify(r.raw, { "webhook-id": r.webhookId, "webhook-timestamp": r.timestamp, "webhook-signature": r.signature });
        return true;
      } catch {
        return false;
      }
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, status: number): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ ok: status < 300 }));
}
