import { BUSY_CORES, SCENARIOS, type Measurement, type ProtocolRun, type Scenario } from "./protocol-bench";

// The printed table, the target checks, and the comparison with bench/baseline.json.

// disturbed: a measurement behind the check ran while other processes used the machine
// (see BUSY_CORES), so the verdict is not conclusive either way.
export type TargetCheck = { pass: boolean | null; disturbed: boolean; text: string };

export function sizeLabel(size: number): string {
  if (size >= 1_000_000 && size % 1_000_000 === 0) return `${size / 1_000_000}M`;
  if (size >= 1000 && size % 1000 === 0) return `${size / 1000}k`;
  return String(size);
}

export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(text.trim());
  if (!m) throw new Error(`not a size: ${text} (use e.g. 0, 100k, 1m)`);
  const n = Number(m[1]);
  const unit = (m[2] ?? "").toLowerCase();
  return Math.round(unit === "m" ? n * 1_000_000 : unit === "k" ? n * 1000 : n);
}

const key = (m: Pick<Measurement, "size" | "scenario" | "concurrency">) => `${m.size}|${m.scenario}|${m.concurrency}`;

function find(run: ProtocolRun, size: number, scenario: Scenario, concurrency: number): Measurement | undefined {
  return run.measurements.find((m) => m.size === size && m.scenario === scenario && m.concurrency === concurrency);
}

// The liveness figures a measurement is compared with: its own paired run when it has one,
// else the size's liveness row at the same concurrency.
function liveFor(run: ProtocolRun, m: Measurement): { rps: number; p50Ms: number } | undefined {
  return m.http.pairedLive ?? find(run, m.size, "live", m.concurrency)?.http;
}

const f0 = (n: number) => n.toFixed(0);
const f2 = (n: number) => n.toFixed(2);
const ratio = (n: number) => `${n.toFixed(2)}×`;

export function table(run: ProtocolRun, baseline: ProtocolRun | null): string {
  const base = new Map((baseline?.measurements ?? []).map((m) => [key(m), m]));
  const header = [
    "seeded",
    "ops in table",
    "scenario",
    "c",
    "HTTP req/s",
    "p50 ms",
    "p99 ms",
    "× live",
    "pg floor req/s",
    "floor p50",
    "floor p99",
    "HTTP ÷ floor",
    "SQL/req",
    "cores srv/pg/other",
    "CPU ms/req srv/pg",
    "× baseline",
  ];
  const rows: string[][] = [];
  const notes: string[] = [];
  for (const m of run.measurements) {
    const live = liveFor(run, m);
    const label = SCENARIOS.find((s) => s.id === m.scenario)?.label ?? m.scenario;
    const b = base.get(key(m));
    const flags = [
      Object.keys(m.http.unexpected).length ? `HTTP unexpected ${JSON.stringify(m.http.unexpected)}` : "",
      m.floor && Object.keys(m.floor.unexpected).length ? `floor unexpected ${JSON.stringify(m.floor.unexpected)}` : "",
      m.http.exhausted ? "HTTP ran out of prepared operations" : "",
      m.floor?.exhausted ? "floor ran out of prepared operations (rate over the shorter time)" : "",
      m.http.cpu.others > BUSY_CORES ? `machine busy during the HTTP run (others ${f2(m.http.cpu.others)} cores)` : "",
      m.floor && m.floor.cpu.others > BUSY_CORES ? `machine busy during the floor run (others ${f2(m.floor.cpu.others)} cores)` : "",
    ].filter(Boolean);
    const c = m.http.cpu;
    if (flags.length) notes.push(`⚠${notes.length + 1} ${sizeLabel(m.size)} ${label} c=${m.concurrency}: ${flags.join("; ")}`);
    rows.push([
      sizeLabel(m.size),
      m.rowsAtStart.toLocaleString("en"),
      label + (flags.length ? ` ⚠${notes.length}` : ""),
      String(m.concurrency),
      f0(m.http.rps),
      f2(m.http.p50Ms),
      f2(m.http.p99Ms),
      live && m.scenario !== "live" ? ratio(m.http.rps / live.rps) : "",
      m.floor ? f0(m.floor.rps) : "",
      m.floor ? f2(m.floor.p50Ms) : "",
      m.floor ? f2(m.floor.p99Ms) : "",
      m.floor ? ratio(m.http.rps / m.floor.rps) : "",
      m.http.sqlPerRequest === null ? "" : f2(m.http.sqlPerRequest),
      `${f2(c.server)}/${f2(c.postgres)}/${f2(c.others)}`,
      `${f2((c.server * 1000) / m.http.rps)}/${f2((c.postgres * 1000) / m.http.rps)}`,
      b ? ratio(m.http.rps / b.http.rps) + (m.floor && b.floor ? ` (floor ${ratio(m.floor.rps / b.floor.rps)})` : "") : "",
    ]);
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line), ...notes].join("\n");
}

// The targets, checked at every measured size (ratios against the liveness run measured
// right before each scenario, in the same run).
export function targets(run: ProtocolRun): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const sizes = [...new Set(run.measurements.map((m) => m.size))];
  const ratioTarget = (size: number, scenario: Scenario, min: number, label: string) => {
    const m = find(run, size, scenario, 16);
    const live = m && liveFor(run, m);
    if (!m || !live) return;
    const r = m.http.rps / live.rps;
    checks.push({
      pass: r >= min && clean(m),
      disturbed: busy(m),
      text: `[${sizeLabel(size)}] ${label} at c=16 ≥ ${min}× liveness: ${ratio(r)} (${f0(m.http.rps)} vs ${f0(live.rps)} req/s)${clean(m) ? "" : " — invalid run, see the notes under the table"}`,
    });
  };
  for (const size of sizes) {
    ratioTarget(size, "claim-new", 0.6, "new claims");
    ratioTarget(size, "complete", 0.6, "completes");
    ratioTarget(size, "replay", 0.7, "replays");
    const claim = find(run, size, "claim-new", 1);
    const live = claim && liveFor(run, claim);
    if (claim && live) {
      const d = claim.http.p50Ms - live.p50Ms;
      checks.push({
        pass: d <= 1 && clean(claim),
        disturbed: busy(claim),
        text: `[${sizeLabel(size)}] new claim p50 at c=1 within 1 ms of liveness p50: +${f2(d)} ms (${f2(claim.http.p50Ms)} vs ${f2(live.p50Ms)} ms)`,
      });
    }
  }
  const smallest = Math.min(...sizes);
  const largest = Math.max(...sizes);
  for (const c of [16, 1]) {
    const a = find(run, smallest, "claim-new", c);
    const b = find(run, largest, "claim-new", c);
    if (!a || !b || smallest !== 0 || largest < 1_000_000) {
      checks.push({ pass: null, disturbed: false, text: `new claim req/s at 1M vs 0 operations (c=${c}): not measured (needs --sizes with 0 and 1m)` });
      continue;
    }
    // The two sizes are measured minutes apart, and the host's speed drifts that much (liveness
    // alone moved 8% between sizes of one run): the loss is judged on each claim run's ratio to
    // the liveness run measured right before it, and the raw req/s are printed beside it.
    const raw = 1 - b.http.rps / a.http.rps;
    const liveA = liveFor(run, a);
    const liveB = liveFor(run, b);
    const paired = liveA && liveB ? 1 - b.http.rps / liveB.rps / (a.http.rps / liveA.rps) : null;
    const loss = paired ?? raw;
    const pct = (x: number) => `${x >= 0 ? "−" : "+"}${Math.abs(x * 100).toFixed(1)}%`;
    checks.push({
      pass: loss <= 0.1 && clean(a) && clean(b),
      disturbed: busy(a, b),
      text:
        paired === null
          ? `new claim req/s at ${sizeLabel(largest)} vs 0 operations (c=${c}) loses ≤ 10%: ${pct(raw)} (${f0(b.http.rps)} vs ${f0(a.http.rps)} req/s)`
          : `new claim req/s at ${sizeLabel(largest)} vs 0 operations (c=${c}) loses ≤ 10%: ${pct(paired)} against liveness (${ratio(b.http.rps / liveB!.rps)} vs ${ratio(a.http.rps / liveA!.rps)}); raw ${pct(raw)} (${f0(b.http.rps)} vs ${f0(a.http.rps)} req/s)`,
    });
  }
  return checks;
}

function busy(...ms: Measurement[]): boolean {
  return ms.some((m) => m.http.cpu.others > BUSY_CORES);
}

function clean(m: Measurement): boolean {
  return Object.keys(m.http.unexpected).length === 0 && !m.http.exhausted;
}

export function formatTargets(checks: TargetCheck[]): string {
  const lines = checks.map((c) => `${c.pass === null ? "n/a  " : c.pass ? "PASS" : "FAIL"}${c.pass !== null && c.disturbed ? "*" : " "} ${c.text}`);
  if (checks.some((c) => c.disturbed)) {
    lines.push("* measured while other processes used more than 0.25 cores (see the notes under the table): not conclusive.");
  }
  return lines.join("\n");
}
