import { spawn } from "node:child_process";
import { once } from "node:events";
import type { RunAs } from "./run-as-postgres-user";
import { DB_USER } from "./settings";
import { spawnOptions } from "./spawn-options";

/** Runs initdb into `pgdata`; throws with initdb's output if it fails. */
export async function runInitdb(options: { initdb: string; pgdata: string; pwFile: string; runAs: RunAs | null }): Promise<void> {
  const args = [
    `--pgdata=${options.pgdata}`,
    `--username=${DB_USER}`,
    `--pwfile=${options.pwFile}`,
    "--auth=scram-sha-256",
    "--encoding=UTF8",
    // C collation + builtin C.UTF-8 ctype: needs no OS locales, identical
    // on every machine, and never invalidated by glibc collation updates.
    "--locale=C",
    "--locale-provider=builtin",
    "--builtin-locale=C.UTF-8",
    "--no-instructions",
  ];
  const child = spawn(options.initdb, args, { ...spawnOptions(options.runAs), stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c.toString("utf8")));
  child.stderr.on("data", (c: Buffer) => (output += c.toString("utf8")));
  // once() rejects if the child emits 'error' (e.g. the binary cannot be spawned).
  const [code] = (await once(child, "close")) as [number | null];
  if (code !== 0) throw new Error(`embedded postgres: initdb failed (exit ${code}):\n${output}`);
}
