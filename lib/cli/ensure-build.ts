import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { projectRoot } from "@/lib/cli/paths";

// Builds the Next app only when its inputs changed since the last build, so `npm start`
// and `npm test` are fast the second time and never serve a stale build. Builds are
// serialized by a lock directory, so two processes starting at once do not build into
// the same folder together.
const inputs = ["app", "lib", "components", "public", "prisma/schema.prisma", "next.config.ts", "proxy.ts", "tsconfig.json", "package-lock.json"];
const skip = new Set(["generated", "node_modules", ".next"]);

export function ensureBuild(options: { distDir?: string; log?: (msg: string) => void } = {}): { built: boolean; distDir: string } {
  const log = options.log ?? (() => undefined);
  const distDir = options.distDir ?? ".next";
  const dir = path.join(projectRoot, distDir);
  const digest = inputsDigest();
  const isCurrent = () =>
    existsSync(path.join(dir, "BUILD_ID")) && readStamp(path.join(dir, "tollgate-inputs.sha256")) === digest;
  if (isCurrent()) return { built: false, distDir };
  // One lock for every build folder: builds also rewrite and restore tsconfig.json, which
  // all of them share.
  return withLock(path.join(projectRoot, ".tollgate", "next-build.lock"), () => {
    if (isCurrent()) return { built: false, distDir };
    log(`Building the app (next build into ${distDir}); this happens only when the sources change…`);
    // Next adds the build folder's type paths to tsconfig.json; a test build folder must not
    // change the committed file (nor the inputs digest), so it is put back afterwards.
    const tsconfig = path.join(projectRoot, "tsconfig.json");
    const committedTsconfig = readFileSync(tsconfig);
    const result = spawnSync(process.execPath, [path.join(projectRoot, "node_modules", "next", "dist", "bin", "next"), "build"], {
      cwd: projectRoot,
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NEXT_DIST_DIR: distDir },
    });
    writeFileSync(tsconfig, committedTsconfig);
    if (result.status !== 0) throw new Error(`next build failed with exit code ${String(result.status)}`);
    writeFileSync(path.join(dir, "tollgate-inputs.sha256"), digest);
    return { built: true, distDir };
  });
}

export function inputsDigest(): string {
  const hash = createHash("sha256");
  for (const input of inputs) addPath(hash, path.join(projectRoot, input));
  return hash.digest("hex");
}

function readStamp(file: string): string | null {
  return existsSync(file) ? readFileSync(file, "utf8") : null;
}

function addPath(hash: ReturnType<typeof createHash>, file: string): void {
  if (!existsSync(file)) return;
  if (statSync(file).isDirectory()) {
    for (const name of readdirSync(file).sort()) if (!skip.has(name)) addPath(hash, path.join(file, name));
    return;
  }
  hash.update(path.relative(projectRoot, file)).update("\0").update(readFileSync(file)).update("\0");
}

// mkdir is atomic: whoever creates the directory holds the lock. A lock whose owner died is broken.
function withLock<T>(lockDir: string, body: () => T): T {
  mkdirSync(path.dirname(lockDir), { recursive: true });
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(path.join(lockDir, "pid"), String(process.pid));
      break;
    } catch {
      const owner = Number(readStamp(path.join(lockDir, "pid")) ?? "NaN");
      if (Number.isFinite(owner) && !isAlive(owner)) rmSync(lockDir, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`timed out waiting for the build lock ${lockDir}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
    }
  }
  try {
    return body();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
