import { spawn } from "node:child_process";
import type { Socket } from "node:net";
import readline from "node:readline";
import type { Binaries } from "./binaries";
import type { RunAs } from "./run-as-postgres-user";
import { HOST, READY_MARKER, READY_TIMEOUT_MS } from "./settings";
import { shutDownPostgres } from "./shut-down-postgres";
import { spawnOptions } from "./spawn-options";
import { withTimeout } from "./with-timeout";

export type RunningServer = {
  port: number;
  pid: number | undefined;
  /** Resolves when the postmaster has exited. */
  exited: Promise<void>;
  /** Sends `signal` unless the server has already exited; synchronous, so usable in process 'exit'. */
  signal: (signal: NodeJS.Signals) => boolean;
  /** Resolves when the server is gone (fast shutdown, escalating if it hangs). */
  stop: () => Promise<void>;
  /** Lets this process exit while the server keeps running (its log lines are forwarded until then). */
  unref: () => void;
};

/** `portInUse`: another process took the port, so another port may work. */
export class StartFailure extends Error {
  constructor(
    message: string,
    readonly portInUse: boolean,
  ) {
    super(message);
  }
}

/** Spawns the postmaster and resolves once it accepts connections. */
export async function launchPostgres(options: {
  bins: Binaries;
  dataDir: string;
  port: number;
  runAs: RunAs | null;
  log: (msg: string) => void;
}): Promise<RunningServer> {
  const { bins, dataDir, port, runAs, log } = options;
  // Command-line settings override postgresql.conf, so they also apply to
  // data dirs created by older versions of this launcher.
  const settings = [
    `listen_addresses=${HOST}`,
    "unix_socket_directories=", // TCP only: no stale /tmp/.s.PGSQL.* files, nothing to collide with
    "lc_messages=C",
  ];
  const args = ["-D", dataDir, "-p", String(port), ...settings.flatMap((s) => ["-c", s])];
  const child = spawn(bins.postgres, args, {
    ...spawnOptions(runAs),
    // Own process group: a terminal Ctrl-C reaches only node, which then
    // stops postgres via stop() after draining, instead of the DB vanishing
    // under in-flight requests. If node dies without stop(), the next start
    // reclaims the orphan (and the 'exit' hook in startEmbeddedPostgres covers process.exit()).
    detached: true,
    stdio: ["ignore", "ignore", "pipe"],
  });

  let hasExited = false;
  let spawnError: Error | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => {
      hasExited = true;
      resolve();
    });
    child.on("error", (err) => {
      spawnError ??= err;
      hasExited = true; // spawn failure: no process to wait for
      resolve();
    });
  });

  // Forward postgres' log lines; keep a tail for error messages.
  const tail: string[] = [];
  const lines = readline.createInterface({ input: child.stderr });
  const stderrClosed = new Promise<void>((resolve) => lines.once("close", () => resolve()));
  const ready = new Promise<"ready">((resolve) => {
    lines.on("line", (line) => {
      log(`postgres: ${line}`);
      tail.push(line);
      if (tail.length > 40) tail.shift();
      if (line.includes(READY_MARKER)) resolve("ready");
    });
  });

  const outcome = await withTimeout(Promise.race([ready, exited.then(() => "exited" as const)]), READY_TIMEOUT_MS);
  if (outcome === "ready") {
    const signal = (sig: NodeJS.Signals): boolean => {
      if (hasExited) return false;
      child.kill(sig);
      return true;
    };
    const waitGone = async (timeoutMs: number): Promise<boolean> => {
      await withTimeout(exited, timeoutMs);
      return hasExited;
    };
    const unref = (): void => {
      child.unref();
      // The stderr pipe would keep the event loop alive too. Once we exit postgres' writes to it
      // fail with EPIPE, which postgres ignores.
      (child.stderr as Partial<Socket> | null)?.unref?.();
    };
    return { port, pid: child.pid, exited, signal, stop: () => shutDownPostgres({ name: "server", signal, waitGone, log }), unref };
  }

  if (outcome === "timeout") {
    child.kill("SIGQUIT");
    await withTimeout(exited, 5_000);
  }
  await withTimeout(stderrClosed, 500); // let the last stderr lines arrive before reporting
  const text = tail.join("\n");
  const what =
    outcome === "timeout"
      ? `not ready after ${READY_TIMEOUT_MS / 1000}s`
      : `exited during startup (code ${child.exitCode ?? child.signalCode ?? "?"})`;
  throw new StartFailure(
    `embedded postgres: server ${what}${spawnError ? `: ${spawnError.message}` : ""}\n${text}`,
    /could not bind|Address already in use|could not create any TCP\/IP sockets/i.test(text),
  );
}
