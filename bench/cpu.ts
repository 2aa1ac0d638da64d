import { readFileSync, readdirSync } from "node:fs";
import type pg from "pg";

// Where the CPU went during one measurement, from /proc: the Next server (and its children),
// the PostgreSQL backends of the bench database plus PostgreSQL's shared helpers (WAL writer,
// checkpointer…), the load generator, and everything else on the machine ("others": another
// build or test run would show up there and make the figures suspect).

export const TICKS_PER_SECOND = 100;

type Snapshot = { at: number; busy: number; procs: Map<number, { ticks: number; comm: string; ppid: number }> };

function readStat(pid: number): { ticks: number; user: number; system: number; comm: string; ppid: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = text.lastIndexOf(")");
    const comm = text.slice(text.indexOf("(") + 1, close);
    const fields = text.slice(close + 2).split(" ");
    // fields[0] is field 3 (state): utime is field 14, stime 15, ppid 4.
    const user = Number(fields[11]);
    const system = Number(fields[12]);
    return { ticks: user + system, user, system, comm, ppid: Number(fields[1]) };
  } catch {
    return null;
  }
}

// One process's user and system (kernel: syscalls, mostly socket I/O) time so far, in ticks (0 once it has exited).
export function processUserSystemTicks(pid: number): { user: number; system: number } {
  const stat = readStat(pid);
  return { user: stat?.user ?? 0, system: stat?.system ?? 0 };
}

// The machine's counters from /proc/stat, in ticks: user nice system idle iowait irq softirq steal …
export function machineTicks(): { user: number; nice: number; system: number; steal: number; total: number } {
  const values = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , , , steal = 0] = values;
  return { user, nice, system, steal, total: values.reduce((a, b) => a + b, 0) };
}

function snapshot(): Snapshot {
  const procs = new Map<number, { ticks: number; comm: string; ppid: number }>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (stat) procs.set(Number(name), stat);
  }
  // Processes' time plus the hypervisor's steal (another VM on the host is interference too);
  // interrupts are left out, they are mostly our own loopback traffic and no process is charged for them.
  const m = machineTicks();
  return { at: performance.now(), busy: m.user + m.nice + m.system + m.steal, procs };
}

export type CpuShares = {
  // CPU seconds per second of wall time (2.0 = both cores busy), by consumer.
  server: number;
  postgres: number;
  client: number;
  others: number;
};

export class CpuSampler {
  private start: Snapshot | null = null;

  begin(): void {
    this.start = snapshot();
  }

  // serverPid: the next start process; clientPid: wrk or the floor process; databaseName: our backends.
  async end(options: { pool: pg.Pool; databaseName: string; serverPid: number; clientPid: number }): Promise<CpuShares> {
    const end = snapshot();
    const start = this.start ?? end;
    const { rows } = await options.pool.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = $1 OR (datname IS NULL AND backend_type <> 'client backend')",
      [options.databaseName],
    );
    const ours = new Set(rows.map((r) => r.pid));
    const descendants = (root: number) => {
      const set = new Set<number>([root]);
      for (let grew = true; grew; ) {
        grew = false;
        for (const [pid, p] of end.procs) {
          if (!set.has(pid) && set.has(p.ppid)) {
            set.add(pid);
            grew = true;
          }
        }
      }
      return set;
    };
    const serverPids = descendants(options.serverPid);
    const clientPids = descendants(options.clientPid);
    const delta = (pid: number) => (end.procs.get(pid)?.ticks ?? 0) - (start.procs.get(pid)?.ticks ?? 0);
    const sum = (pids: Iterable<number>) => [...pids].reduce((a, pid) => a + Math.max(0, delta(pid)), 0);
    const seconds = (end.at - start.at) / 1000;
    const perSecond = (ticks: number) => ticks / TICKS_PER_SECOND / seconds;
    // The bench process itself (idle while wrk runs) counts as client, not as others.
    const benchPids = descendants(process.pid);
    const server = perSecond(sum(serverPids));
    const postgres = perSecond(sum(ours));
    const client = perSecond(sum(new Set([...clientPids, ...benchPids].filter((p) => !serverPids.has(p)))));
    const busy = perSecond(end.busy - start.busy);
    return { server, postgres, client, others: Math.max(0, busy - server - postgres - client) };
  }
}

// Another process using more than this many cores during a measured run makes it "disturbed".
export const BUSY_CORES = 0.25;

// A run during which something else on the machine used more than BUSY_CORES is measured again
// (up to `attempts` runs in all); the least disturbed one is kept, and still flagged if busy.
export async function leastDisturbed<T extends { cpu: CpuShares }>(
  attempts: number,
  measure: (attempt: number) => Promise<T>,
  onRetry: (others: number) => void,
): Promise<T> {
  let kept = await measure(0);
  for (let attempt = 1; attempt < attempts && kept.cpu.others > BUSY_CORES; attempt++) {
    onRetry(kept.cpu.others);
    const again = await measure(attempt);
    if (again.cpu.others < kept.cpu.others) kept = again;
  }
  return kept;
}
