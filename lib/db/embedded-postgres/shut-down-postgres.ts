import { isErrno } from "./errors";
import { waitGone } from "./read-proc";

/** SIGINT = fast shutdown (roll back open transactions, checkpoint, exit); escalate to SIGQUIT (immediate) and SIGKILL if it hangs. */
const ESCALATION = [
  ["SIGINT", 30_000],
  ["SIGQUIT", 5_000],
  ["SIGKILL", 5_000],
] as const;

/** Resolves once the process is gone; throws if even SIGKILL did not end it. */
export async function shutDownPostgres(options: {
  /** For messages: "server", "pid 123". */
  name: string;
  /** Sends the signal; false if there is no process to signal any more. */
  signal: (signal: NodeJS.Signals) => boolean;
  /** true once the process is gone, false if it is still there after `timeoutMs`. */
  waitGone: (timeoutMs: number) => Promise<boolean>;
  log: (msg: string) => void;
}): Promise<void> {
  for (const [signal, timeoutMs] of ESCALATION) {
    if (!options.signal(signal)) return;
    if (await options.waitGone(timeoutMs)) return;
    options.log(`embedded postgres: ${options.name} still running after ${signal}`);
  }
  throw new Error(`embedded postgres: could not stop ${options.name}`);
}

/** For a postmaster that is not our child (we only know its pid). */
export function shutDownPid(pid: number, log: (msg: string) => void): Promise<void> {
  return shutDownPostgres({
    name: `pid ${pid}`,
    signal: (signal) => {
      try {
        process.kill(pid, signal);
        return true;
      } catch (err) {
        if (isErrno(err, "ESRCH")) return false;
        throw err;
      }
    },
    waitGone: (timeoutMs) => waitGone(pid, timeoutMs),
    log,
  });
}
