// The database floor: the hot-path statements of a scenario issued directly with `pg`, N
// concurrent loops over a pool of N connections, for the same duration as the HTTP run. The
// statement and its parameters are exactly what the server sends (bench/fixtures.ts), so
// HTTP req/s ÷ floor req/s is what Next, auth, validation and Prisma cost on top of the SQL.
//
// bench/protocol-bench.ts calls runFloor() in its own (otherwise idle) process; it also runs alone:
//   tsx bench/pg-floor.ts '<json FloorJob>'   → prints one line: FLOOR_JSON <FloorResult>
import { readFileSync } from "node:fs";
import pg from "pg";
import { CpuSampler, type CpuShares } from "./cpu";
import type { BenchWorld } from "./database";
import { CLAIM_SQL, COMPLETE_SQL, claimParams, completeParams } from "./fixtures";

export type FloorScenario = "claim-new" | "complete" | "replay" | "conflict";

export type FloorJob = {
  world: BenchWorld;
  secret: string;
  scenario: FloorScenario;
  concurrency: number;
  seconds: number;
  warmupSeconds: number;
  // claim-new: a fresh prefix for the run's keys. replay / conflict: the pool's key prefix and size.
  keyPrefix: string;
  poolSize?: number;
  // complete: a file of "operationId fencingToken" lines claimed beforehand.
  completesFile?: string;
  // The code tollgate_claim / tollgate_complete should answer; every answer's code is counted
  // (FloorResult.codes) and the caller flags any other.
  expectCode: string;
  // For the CPU split of the measured phase: the server's PID and the bench database's name.
  cpu: { serverPid: number; databaseName: string };
};

export type FloorResult = {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  codes: Record<string, number>;
  // complete: the prepared operations ran out and the run stopped early (rate is still count/time).
  exhausted: boolean;
  cpu: CpuShares;
};

export async function runFloor(job: FloorJob): Promise<FloorResult> {
  const pool = new pg.Pool({ connectionString: job.world.databaseUrl, max: job.concurrency, application_name: "tollgate-bench-floor" });
  try {
    // Open every connection before the clock starts, as the server's pool is warm too.
    await Promise.all(Array.from({ length: job.concurrency }, () => pool.query("SELECT 1")));
    const completes = job.completesFile
      ? readFileSync(job.completesFile, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((line) => line.split(" ") as [string, string])
      : [];
    let nextComplete = 0;
    let counter = 0;
    const nextStatement = (): { text: string; values: unknown[] } | null => {
      counter += 1;
      switch (job.scenario) {
        case "claim-new":
          return { text: CLAIM_SQL, values: claimParams(job.world, job.secret, `${job.keyPrefix}${counter}`) };
        case "replay":
        case "conflict":
          return { text: CLAIM_SQL, values: claimParams(job.world, job.secret, `${job.keyPrefix}${counter % (job.poolSize ?? 1)}`) };
        case "complete": {
          const op = completes[nextComplete++];
          return op ? { text: COMPLETE_SQL, values: completeParams(job.world, op[0], op[1]) } : null;
        }
      }
    };

    const phase = async (seconds: number, record: boolean) => {
      const latencies: number[] = [];
      const codes: Record<string, number> = {};
      let errors = 0;
      let exhausted = false;
      const started = performance.now();
      const until = started + seconds * 1000;
      const loop = async () => {
        while (performance.now() < until) {
          const statement = nextStatement();
          if (!statement) {
            exhausted = true;
            return;
          }
          const t0 = performance.now();
          try {
            const { rows } = await pool.query<{ r: { code: string } }>(statement);
            const code = rows[0]?.r.code ?? "none";
            codes[code] = (codes[code] ?? 0) + 1;
          } catch {
            errors += 1;
          }
          if (record) latencies.push(performance.now() - t0);
        }
      };
      await Promise.all(Array.from({ length: job.concurrency }, loop));
      const elapsed = (performance.now() - started) / 1000;
      latencies.sort((a, b) => a - b);
      const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
      const requests = Object.values(codes).reduce((a, b) => a + b, 0) + errors;
      return { requests, seconds: elapsed, rps: requests / elapsed, p50Ms: pct(50), p99Ms: pct(99), errors, codes, exhausted };
    };

    if (job.warmupSeconds > 0) await phase(job.warmupSeconds, false);
    const sampler = new CpuSampler();
    sampler.begin();
    const measured = await phase(job.seconds, true);
    const cpu = await sampler.end({ pool, databaseName: job.cpu.databaseName, serverPid: job.cpu.serverPid, clientPid: process.pid });
    return { ...measured, cpu };
  } finally {
    await pool.end();
  }
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const job = JSON.parse(process.argv[2] ?? "{}") as FloorJob;
  const result = await runFloor(job);
  process.stdout.write(`FLOOR_JSON ${JSON.stringify(result)}\n`);
}
