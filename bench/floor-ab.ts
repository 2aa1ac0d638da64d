// `npm run bench -- floor-ab --sql <file> [--seed N] [--seconds S] [--rounds R] [--scenarios a,b]`:
// PostgreSQL's own CPU per hot-path statement (the pg floor: the exact statements the server
// sends, bench/pg-floor.ts), before and after applying a SQL file to the same database. For
// judging a change to the SQL functions, triggers or indexes without Next.js or HTTP in the way:
// the server's CPU per request moves by ±10% between runs on this VM, PostgreSQL's per statement
// by a few percent. "Before" is the migrated schema as it is; "after" is it plus the file.
//
// bench/sql/helpers-as-sql-functions.sql puts back the LANGUAGE sql helpers that migration
// 20261130060000 replaced, so `npm run bench -- floor-ab --sql bench/sql/helpers-as-sql-functions.sql`
// measures that migration (in reverse: "after" is the old schema).
import { readFileSync, rmSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { benchDatabaseName, createDatabase, DEFAULT_SERVER_URL, dropDatabase, prepareWorld, type BenchWorld } from "./database";
import { floorKeyPrefix, POOL_SIZE, prepareKeyPools, writeCompletesFile } from "./fixtures";
import { runFloor, type FloorScenario } from "./pg-floor";
import { SCENARIOS } from "./protocol-bench";
import { seedOperations } from "./seed-operations";
import { median } from "./stats";

const FLOOR_SCENARIOS: FloorScenario[] = ["claim-new", "complete", "replay", "conflict"];
const CONCURRENCY = 16;
// What tollgate_claim / tollgate_complete answer in each scenario (the protocol bench's table).
const expectCode = (scenario: FloorScenario) => SCENARIOS.find((s) => s.id === scenario)?.floorCode ?? "";

type Options = { sql: string; seed: number; seconds: number; rounds: number; scenarios: FloorScenario[] };

function parseArgs(argv: string[]): Options {
  const o: Options = { sql: "", seed: 100_000, seconds: 4, rounds: 2, scenarios: FLOOR_SCENARIOS };
  for (let i = 0; i < argv.length; i++) {
    const value = () => argv[++i] ?? "";
    switch (argv[i]) {
      case "--sql": o.sql = value(); break;
      case "--seed": o.seed = Number(value()); break;
      case "--seconds": o.seconds = Number(value()); break;
      case "--rounds": o.rounds = Number(value()); break;
      case "--scenarios": {
        const wanted = value().split(",");
        o.scenarios = FLOOR_SCENARIOS.filter((s) => wanted.includes(s));
        break;
      }
      default: throw new Error(`unknown argument: ${argv[i]}`);
    }
  }
  if (!o.sql) throw new Error("usage: npm run bench -- floor-ab --sql <file> [--seed N] [--seconds S] [--rounds R] [--scenarios claim-new,complete,replay,conflict]");
  return o;
}

type Figure = { rps: number; pgMsPerStatement: number };

export async function runFloorAb(argv: string[]): Promise<number> {
  const o = parseArgs(argv);
  const sql = readFileSync(o.sql, "utf8");
  const log = (m: string) => process.stderr.write(`[floor-ab] ${m}\n`);
  const serverUrl = process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
  const dbName = benchDatabaseName(new Date());
  const databaseUrl = await createDatabase(serverUrl, dbName);
  const scratch = mkdtempSync(path.join(tmpdir(), "tollgate-floor-ab-"));
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  try {
    const world = await prepareWorld(databaseUrl);
    await seedOperations({ pool, world, count: o.seed, tag: "ab" });
    await prepareKeyPools(pool, world);
    const figures: Record<string, Figure[]> = {};
    for (const side of ["before", "after"] as const) {
      if (side === "after") await pool.query(sql);
      for (const scenario of o.scenarios) {
        for (let round = 0; round < o.rounds; round++) {
          const f = await measure(pool, world, dbName, scenario, `${side}-${round}`, o.seconds, scratch);
          log(`${side.padEnd(6)} ${scenario.padEnd(9)} ${f.rps.toFixed(0).padStart(5)} statements/s  PostgreSQL ${f.pgMsPerStatement.toFixed(3)} ms CPU each`);
          (figures[`${side} ${scenario}`] ??= []).push(f);
        }
      }
    }
    const med = (k: string, pick: (f: Figure) => number) => median((figures[k] ?? []).map(pick));
    console.log(`\nPostgreSQL CPU per statement, c=${CONCURRENCY}, ${o.seed} operations seeded, median of ${o.rounds}; after = with ${o.sql}`);
    console.log("| statement | before ms | after ms | after ÷ before | before stmt/s | after stmt/s |");
    console.log("|---|---:|---:|---:|---:|---:|");
    for (const s of o.scenarios) {
      const [b, a] = [med(`before ${s}`, (f) => f.pgMsPerStatement), med(`after ${s}`, (f) => f.pgMsPerStatement)];
      console.log(`| ${s} | ${b.toFixed(3)} | ${a.toFixed(3)} | ${(a / b).toFixed(2)}× | ${med(`before ${s}`, (f) => f.rps).toFixed(0)} | ${med(`after ${s}`, (f) => f.rps).toFixed(0)} |`);
    }
    return 0;
  } finally {
    await pool.end();
    rmSync(scratch, { recursive: true, force: true });
    await dropDatabase(serverUrl, dbName);
  }
}

async function measure(pool: pg.Pool, world: BenchWorld, dbName: string, scenario: FloorScenario, tag: string, seconds: number, scratch: string): Promise<Figure> {
  const completesFile =
    scenario === "complete" ? await writeCompletesFile(pool, world, `ab-${tag}-`, 25_000, path.join(scratch, `completes-${tag}.txt`)) : undefined;
  const r = await runFloor({
    world,
    secret: "floor-ab-secret",
    scenario,
    concurrency: CONCURRENCY,
    seconds,
    warmupSeconds: 0.5,
    keyPrefix: floorKeyPrefix(scenario, `ab-new-${tag}-`),
    poolSize: POOL_SIZE,
    completesFile,
    expectCode: expectCode(scenario),
    cpu: { serverPid: process.pid, databaseName: dbName },
  });
  const wrong = Object.keys(r.codes).filter((c) => c !== expectCode(scenario));
  if (wrong.length > 0 || r.errors > 0) throw new Error(`${scenario}: expected only ${expectCode(scenario)}, got ${JSON.stringify(r.codes)} and ${r.errors} errors`);
  if (r.exhausted) throw new Error(`${scenario}: ran out of prepared operations; use fewer --seconds`);
  return { rps: r.rps, pgMsPerStatement: (r.cpu.postgres * 1000) / r.rps };
}
