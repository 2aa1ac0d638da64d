import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import type { Binaries } from "./binaries";
import { isGone, readProc } from "./read-proc";
import type { RunAs } from "./run-as-postgres-user";
import { runInitdb } from "./run-initdb";
import { DB_PASSWORD } from "./settings";

/**
 * Initialises the cluster if `dataDir` is missing or empty. initdb runs in a
 * sibling temp dir that is renamed into place only on success, so the
 * existence of `dataDir/PG_VERSION` means "fully initialised".
 * Returns true if it initialised the cluster now, false if it already was.
 */
export async function initDataDir(options: {
  dataDir: string;
  bins: Binaries;
  runAs: RunAs | null;
  log: (msg: string) => void;
}): Promise<boolean> {
  const { dataDir, bins, runAs, log } = options;
  await removeAbandonedInitDirs(dataDir);

  const version = await fs.readFile(path.join(dataDir, "PG_VERSION"), "utf8").catch(() => null);
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

  const tmpDir = `${dataDir}.init-${process.pid}-${randomBytes(4).toString("hex")}`;
  const pwFile = `${tmpDir}.pw`;
  log(`embedded postgres: initdb ${dataDir}`);
  try {
    await fs.mkdir(tmpDir, { mode: 0o700 });
    await fs.writeFile(pwFile, `${DB_PASSWORD}\n`, { mode: 0o600 });
    if (runAs) {
      await fs.chown(tmpDir, runAs.uid, runAs.gid);
      await fs.chown(pwFile, runAs.uid, runAs.gid);
    }
    await runInitdb({ initdb: bins.initdb, pgdata: tmpDir, pwFile, runAs });
    await fs.rename(tmpDir, dataDir);
  } finally {
    await fs.rm(pwFile, { force: true });
    await fs.rm(tmpDir, { recursive: true, force: true });
  }
  return true;
}

/**
 * Leftovers of an initdb whose process was killed mid-way (the name carries
 * the pid, so a concurrent start's in-progress init is left alone).
 */
async function removeAbandonedInitDirs(dataDir: string): Promise<void> {
  const parent = path.dirname(dataDir);
  const prefix = `${path.basename(dataDir)}.init-`;
  for (const name of await fs.readdir(parent)) {
    const pid = name.startsWith(prefix) ? /^(\d+)-/.exec(name.slice(prefix.length))?.[1] : undefined;
    if (pid !== undefined && isGone(await readProc(Number(pid)))) {
      await fs.rm(path.join(parent, name), { recursive: true, force: true });
    }
  }
}
