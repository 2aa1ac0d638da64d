import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { stopEmbeddedPostgres } from "@/lib/db/embedded-postgres";
import { isGone, readProc } from "@/lib/db/embedded-postgres/read-proc";
import { databaseUrl } from "@/lib/db/embedded-postgres/settings";
import { TEST_SECRET } from "../support/test-app";

// Without DATABASE_URL every CLI process uses the embedded PostgreSQL under the local dir, and
// the server must outlive whichever process started it: it stops when the LAST process using
// it closes. Two real `worker` processes, the first of which starts the server.

const projectRoot = path.resolve(import.meta.dirname, "..", "..");
// A throwaway local dir (TOLLGATE_LOCAL_DIR) inside the project's .tollgate/, never the developer's own.
mkdirSync(path.join(projectRoot, ".tollgate"), { recursive: true });
const localDir = mkdtempSync(path.join(projectRoot, ".tollgate", "embedded-sharing-"));
const dataDir = path.join(localDir, "postgres");
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await stopEmbeddedPostgres({ dataDir }); // only if the test failed half-way
  rmSync(localDir, { recursive: true, force: true });
});

type Worker = { child: ChildProcess; output: string[]; exited: Promise<number | null> };

async function startWorker(): Promise<Worker> {
  const env: NodeJS.ProcessEnv = { ...process.env, TOLLGATE_LOCAL_DIR: localDir, TOLLGATE_SECRET_KEY: TEST_SECRET };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, ["--import", "tsx", "lib/cli/main.ts", "worker"], { cwd: projectRoot, env, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  const output: string[] = [];
  child.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")));
  child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const deadline = Date.now() + 40_000;
  while (!output.join("").includes("is running")) {
    if (child.exitCode !== null) throw new Error(`worker exited early (${child.exitCode}):\n${output.join("")}`);
    if (Date.now() > deadline) throw new Error(`worker did not start:\n${output.join("")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, output, exited };
}

async function stopWorker(worker: Worker): Promise<number | null> {
  worker.child.kill("SIGTERM");
  return worker.exited;
}

function postmasterPid(): number | null {
  return existsSync(path.join(dataDir, "postmaster.pid")) ? Number(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]) : null;
}

async function selectOne(): Promise<number> {
  const { port } = JSON.parse(readFileSync(`${dataDir}.state.json`, "utf8")) as { port: number };
  const client = new pg.Client({ connectionString: databaseUrl(port), connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return (await client.query<{ one: number }>("SELECT 1 AS one")).rows[0]!.one;
  } finally {
    await client.end();
  }
}

it("the server started by one process survives its exit while another still uses it, and stops with the last", async () => {
  const a = await startWorker(); // starts the embedded server
  const postmaster = postmasterPid();
  expect(postmaster).not.toBeNull();
  const b = await startWorker(); // shares it

  expect(await stopWorker(a)).toBe(0);
  await new Promise((r) => setTimeout(r, 1_000)); // a worker whose database died exits on its own (code 1)

  expect(b.child.exitCode, b.output.join("")).toBeNull();
  expect(postmasterPid()).toBe(postmaster);
  expect(await selectOne()).toBe(1);

  expect(await stopWorker(b), b.output.join("")).toBe(0);
  expect(postmasterPid()).toBeNull();
  expect(isGone(await readProc(postmaster!))).toBe(true);
}, 60_000);

// A terminal's Ctrl-C reaches the whole process group, and tsx's parent process (npm start, npm
// run worker) may relay it once more: the second signal must not end the process before its
// shutdown has stopped the server it was the last to use.
it("a signal twice in a row still shuts down cleanly: the last process stops the server", async () => {
  const worker = await startWorker();
  const postmaster = postmasterPid();
  expect(postmaster).not.toBeNull();

  worker.child.kill("SIGINT");
  // Later than at once (the kernel would merge two pending signals into one), as tsx relays it.
  await new Promise((r) => setTimeout(r, 100));
  worker.child.kill("SIGINT");

  expect(await worker.exited, worker.output.join("")).toBe(0);
  expect(postmasterPid()).toBeNull();
  expect(isGone(await readProc(postmaster!))).toBe(true);
}, 60_000);
