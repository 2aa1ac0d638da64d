// `npm run bench -- [protocol|console] [options]`: Tollgate's benchmarks. `protocol` (the
// default) measures the claim/complete hot path against a real `next start`; see bench/README.md.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { formatTargets, parseSize, sizeLabel, table, targets } from "./report";
import { resultsDir, runProtocolBench, type ProtocolOptions, type ProtocolRun } from "./protocol-bench";
import { runConsoleBench } from "./console-bench";
import { runWebhooksBench } from "./webhooks-bench";
import { runProfile } from "./profile-hot-path";
import { runPairedRatios } from "./paired-ratios";
import { runHandlerCost } from "./handler-cost";
import { runFloorAb } from "./floor-ab";

const USAGE = `usage: npm run bench -- [protocol] [--quick] [--seconds N] [--warmup N] [--sizes 0,100k,1m] [--attempts N] [--save-baseline] [--keep-db]
  protocol         claims, completes, replays and 409s over HTTP and straight to PostgreSQL (default)
  console          the console's queries at 1M operations, and page TTFB (flags: npm run bench -- console --help)
  webhooks         verified webhook ingests beside the liveness route (flags: npm run bench -- webhooks --help)
  paired           the c=16 ratios (--connections 1: the c=1 p50s), each route paired with liveness runs on either side [--rounds N] [--seconds S] [--node FLAGS] [--framework] [--connections 1]
  handler          Tollgate's own CPU per hot-path request, route handlers called in-process [--requests N] [--rounds N]
  floor-ab --sql F PostgreSQL's CPU per hot-path statement before and after applying a SQL file [--seed N] [--seconds S] [--rounds R]
  profile [replay|complete] where the server's CPU goes per request, against liveness (node --cpu-prof)
  --quick          2 s per measurement, sizes 0 and 100k (a smoke run; not comparable with the baseline)
  --seconds N      measured seconds per run (default 5)
  --warmup N       warm-up seconds before each run (default 1)
  --sizes LIST     operations seeded before each round (default 0,100k,1m)
  --attempts N     measure a run again, up to N times in all, when other processes used > 0.25 cores during it (default 2)
  --save-baseline  also write this run's figures to bench/baseline.json
  --keep-db        do not drop the bench database at the end
DATABASE_URL picks the PostgreSQL server (a fresh database is created on it and dropped afterwards);
default: the server of postgresql://postgres@127.0.0.1:5432/test.`;

class UsageError extends Error {}

type Parsed = { command: string; options: ProtocolOptions; saveBaseline: boolean; argv: string[] };

function parseArgs(argv: string[]): Parsed {
  let command = "protocol";
  let quick = false;
  let seconds: number | undefined;
  let warmup: number | undefined;
  let sizes: number[] | undefined;
  let saveBaseline = false;
  let keepDb = false;
  let attempts = 2;
  const number = (flag: string, value: string | undefined) => {
    const n = Number(value);
    if (!value || !Number.isFinite(n) || n <= 0) throw new UsageError(`${flag} needs a positive number`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const [flag, inline] = arg.startsWith("--") && arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const value = () => inline ?? argv[++i];
    switch (flag) {
      case "protocol":
      case "console":
        command = flag;
        break;
      case "--quick":
        quick = true;
        break;
      case "--seconds":
        seconds = number(flag, value());
        break;
      case "--warmup":
        warmup = number(flag, value());
        break;
      case "--sizes":
        sizes = (value() ?? "").split(",").map(parseSize);
        break;
      case "--save-baseline":
        saveBaseline = true;
        break;
      case "--attempts":
        attempts = Math.round(number(flag, value()));
        break;
      case "--keep-db":
        keepDb = true;
        break;
      case "-h":
      case "--help":
        throw new UsageError("");
      default:
        throw new UsageError(`unknown argument: ${arg}`);
    }
  }
  const options: ProtocolOptions = {
    seconds: seconds ?? (quick ? 2 : 5),
    warmupSeconds: warmup ?? 1,
    sizes: [...new Set(sizes ?? (quick ? [0, 100_000] : [0, 100_000, 1_000_000]))].sort((a, b) => a - b),
    concurrencies: [1, 16],
    attempts,
    keepDb,
  };
  return { command, options, saveBaseline, argv };
}

function reproduceCommand(options: ProtocolOptions): string {
  const db = process.env.DATABASE_URL ? "DATABASE_URL=<same server> " : "";
  const sizes = options.sizes.map(sizeLabel).join(",").toLowerCase();
  return `${db}npm run bench -- protocol --seconds ${options.seconds} --warmup ${options.warmupSeconds} --sizes ${sizes} --attempts ${options.attempts}`;
}

async function protocol(parsed: Parsed): Promise<number> {
  const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
  const run = await runProtocolBench(parsed.options, log);
  const baselineFile = path.resolve("bench", "baseline.json");
  const baseline = existsSync(baselineFile) ? (JSON.parse(readFileSync(baselineFile, "utf8")) as ProtocolRun) : null;
  const stamp = run.startedAt.replace(/[:.]/g, "-");
  const resultFile = path.join(resultsDir(), `${stamp}.json`);
  const checks = targets(run);
  writeFileSync(resultFile, JSON.stringify({ ...run, targets: checks }, null, 2) + "\n");
  if (parsed.saveBaseline) writeFileSync(baselineFile, JSON.stringify({ ...run, targets: checks }, null, 2) + "\n");

  const out = (s = "") => process.stdout.write(`${s}\n`);
  out();
  out(`## Tollgate protocol benchmark — ${run.startedAt} (${run.totalSeconds.toFixed(0)} s)`);
  out(
    `${run.machine.cpus} CPUs, Node ${run.machine.node}, PostgreSQL ${run.machine.postgres}; wrk, ${parsed.options.seconds} s per run after ${parsed.options.warmupSeconds} s warm-up; ` +
      `load average before ${run.machine.loadBefore.map((l) => l.toFixed(2)).join(" ")}, after ${run.machine.loadAfter.map((l) => l.toFixed(2)).join(" ")}`,
  );
  out(`PostgreSQL shared_buffers ${run.machine.sharedBuffers}; operation + attempt tables with indexes at each size: ${run.rounds.map((r) => `${sizeLabel(r.size)} ${r.operationMb + r.attemptMb} MB`).join(", ")}`);
  if (run.seeding.length) out(`seeding: ${run.seeding.map((s) => `${sizeLabel(s.size)} in ${s.seconds.toFixed(1)} s`).join(", ")}`);
  out();
  out(table(run, baseline));
  out();
  out("cores = CPU cores busy during the measured HTTP run: the next start process / this database's PostgreSQL backends");
  out("and helpers / everything else on the machine (high = disturbed run); CPU ms/req = the same per request.");
  out("SQL/req = statements the server sent per request (tollgate_db_queries_total). Floor CPU figures are in the JSON.");
  if (baseline) {
    const same = baseline.options.seconds === run.options.seconds && baseline.options.warmupSeconds === run.options.warmupSeconds;
    out(`× baseline = HTTP req/s ÷ bench/baseline.json (${baseline.startedAt})${same ? "." : `, which used other options (${baseline.options.seconds} s runs after ${baseline.options.warmupSeconds} s warm-up): compare with care.`}`);
  } else {
    out("No bench/baseline.json: run with --save-baseline to record one.");
  }
  out();
  out("### Targets (ratios against GET /api/live measured in the same run)");
  out(formatTargets(checks));
  out();
  out(`results: ${path.relative(process.cwd(), resultFile)}${parsed.saveBaseline ? " (also bench/baseline.json)" : ""}`);
  out(`reproduce: ${reproduceCommand(parsed.options)}`);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  // The console benchmark has flags of its own (see bench/console-bench.ts).
  if (argv[0] === "console") return runConsoleBench(argv.slice(1));
  if (argv[0] === "webhooks") return runWebhooksBench(argv.slice(1));
  if (argv[0] === "profile") return runProfile(argv.slice(1));
  if (argv[0] === "paired") return runPairedRatios(argv.slice(1));
  if (argv[0] === "handler") return runHandlerCost(argv.slice(1));
  if (argv[0] === "floor-ab") return runFloorAb(argv.slice(1));
  const parsed = parseArgs(argv);
  switch (parsed.command) {
    case "protocol":
      return protocol(parsed);
    case "console":
      return runConsoleBench(parsed.argv.slice(parsed.argv.indexOf("console") + 1));
    default:
      throw new UsageError(`unknown benchmark: ${parsed.command}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message ? `bench: ${error.message}\n` : ""}${USAGE}\n`);
      process.exitCode = 2;
    } else {
      process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    }
  },
);
