// `npm run bench -- handler [--requests N] [--rounds N] [--only claim|replay|complete] [--als]`: what Tollgate's own code costs per hot-path
// request, without Next.js and without HTTP. The route handlers (the same exports `next start`
// serves) are called in this process with web Requests, 16 at a time, against a real database;
// the process's CPU time per request (user + system, so the hypervisor's steal does not count)
// is printed next to a handler that only reads the body and answers: the difference is the
// cost of auth, validation, hashing, the SQL call, metrics and the response. The protocol
// bench's HTTP figures add the framework's share on top; this one isolates ours, steadily
// enough to judge a change of a few hundredths of a millisecond.
import { AsyncLocalStorage } from "node:async_hooks";
import pg from "pg";
import { closeDb } from "@/lib/db";
import { benchDatabaseName, createDatabase, DEFAULT_SERVER_URL, dropDatabase, prepareWorld } from "./database";
import { claimBatch, CLAIM_ARGS, succeededBatch } from "./fixtures";
import { median } from "./stats";

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
type Case = { label: string; make: (i: number) => { req: Request; params: Record<string, string> }; handler: Handler; status: number };

const CONCURRENCY = 16;


export async function runHandlerCost(argv: string[]): Promise<number> {
  let requests = 4000;
  let rounds = 5;
  // --only: the floor and one route, e.g. to take a CPU profile of that route alone.
  let only: string | null = null;
  // --als: each request runs inside an AsyncLocalStorage context, as Next.js runs route handlers.
  // On Node 20 that turns on promise hooks, which makes every promise and callback dearer.
  let als: AsyncLocalStorage<number> | null = null;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--requests") requests = Number(argv[++i]);
    else if (argv[i] === "--rounds") rounds = Number(argv[++i]);
    else if (argv[i] === "--only") {
      only = argv[++i] ?? "";
      if (!only) throw new Error("--only needs a route: claim, replay or complete");
    }
    else if (argv[i] === "--als") als = new AsyncLocalStorage<number>();
    else throw new Error(`unknown argument: ${argv[i]}`);
  }
  const serverUrl = process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
  const dbName = benchDatabaseName(new Date());
  const databaseUrl = await createDatabase(serverUrl, dbName);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  try {
    const world = await prepareWorld(databaseUrl);
    await succeededBatch(pool, world, "replay-", 1000);
    // The route modules read the environment on first use, as the server does.
    Object.assign(process.env, { DATABASE_URL: databaseUrl, TOLLGATE_SECRET_KEY: "handler-secret-0123456789abcdef0123456", LOG_LEVEL: "warn" });
    const claimRoute = (await import("@/app/api/v1/operations/route")) as unknown as { POST: Handler };
    const completeRoute = (await import("@/app/api/v1/operations/[id]/complete/route")) as unknown as { POST: Handler };
    const headers = { authorization: `Bearer ${world.agent.secret}`, "content-type": "application/json" };
    const claimBody = JSON.stringify({ tool: world.tool, args: CLAIM_ARGS });
    const post = (path: string, body: string, extra: Record<string, string> = {}) =>
      new Request(`http://127.0.0.1:3000${path}`, { method: "POST", headers: { ...headers, ...extra, "content-length": String(Buffer.byteLength(body)) }, body });
    const bodyOnly: Handler = async (req) => {
      await req.arrayBuffer();
      return new Response('{"ok":true}', { headers: { "content-type": "application/json" } });
    };
    let run = 0;
    const completes: { operationId: string; fencingToken: string }[][] = [];
    const allCases: Case[] = [
      { label: "read body, answer (floor)", handler: bodyOnly, status: 200, make: () => ({ req: post("/api/v1/operations", claimBody, { "idempotency-key": "x" }), params: {} }) },
      { label: "new claim", handler: claimRoute.POST, status: 201, make: (i) => ({ req: post("/api/v1/operations", claimBody, { "idempotency-key": `h-${run}-${i}` }), params: {} }) },
      { label: "replay", handler: claimRoute.POST, status: 200, make: (i) => ({ req: post("/api/v1/operations", claimBody, { "idempotency-key": `replay-${i % 1000}` }), params: {} }) },
      {
        label: "complete",
        handler: completeRoute.POST,
        status: 200,
        make: (i) => {
          const op = completes[run]![i]!;
          const body = `{"fencingToken":"${op.fencingToken}","outcome":"succeeded","result":{"statusCode":201,"body":{"id":"ch_${op.fencingToken}","amount":4200},"resourceId":"ch_${op.fencingToken}"}}`;
          return { req: post(`/api/v1/operations/${op.operationId}/complete`, body), params: { id: op.operationId } };
        },
      },
    ];
    // The floor (first) always runs; --only keeps one route beside it.
    const cases = only ? allCases.filter((c, i) => i === 0 || c.label.endsWith(only)) : allCases;
    if (cases.length < 2) throw new Error(`--only: no route named ${only}`);
    const results = new Map<string, number[]>();
    // Round 0 warms the JIT up and is not counted.
    for (run = 0; run <= rounds; run++) {
      completes[run] = await claimBatch(pool, world, `hc-${run}-`, requests);
      for (const c of cases) {
        const cpu0 = process.cpuUsage();
        let next = 0;
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            for (let i = next++; i < requests; i = next++) {
              const { req, params } = c.make(i);
              const call = () => c.handler(req, { params: Promise.resolve(params) });
              const res = await (als ? als.run(i, call) : call());
              await res.arrayBuffer();
              if (res.status !== c.status) throw new Error(`${c.label}: ${res.status}`);
            }
          }),
        );
        const cpu = process.cpuUsage(cpu0);
        if (run > 0) results.set(c.label, [...(results.get(c.label) ?? []), (cpu.user + cpu.system) / 1000 / requests]);
      }
    }
    const floor = median(results.get(cases[0]!.label)!);
    console.log(`| handler (in-process, c=${CONCURRENCY}) | CPU ms/request (median of ${rounds}) | beyond the floor |`);
    console.log("|---|---:|---:|");
    for (const c of cases) {
      const m = median(results.get(c.label)!);
      console.log(`| ${c.label} | ${m.toFixed(3)} | ${c === cases[0] ? "" : `+${(m - floor).toFixed(3)}`} |`);
    }
  } finally {
    await pool.end();
    await closeDb();
    await dropDatabase(serverUrl, dbName);
  }
  return 0;
}
