import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { projectRoot } from "@/lib/cli/paths";

// Builds the Next app only when its inputs changed since the last build, so `npm start`
// and `npm test` are fast the second time and never serve a stale build.
const inputs = ["app", "lib", "components", "public", "prisma/schema.prisma", "next.config.ts", "tsconfig.json", "package-lock.json"];
const skip = new Set(["generated", "node_modules", ".next"]);

export function ensureBuild(options: { log?: (msg: string) => void } = {}): { built: boolean } {
  const log = options.log ?? (() => undefined);
  const stamp = path.join(projectRoot, ".next", "tollgate-inputs.sha256");
  const digest = inputsDigest();
  const buildId = path.join(projectRoot, ".next", "BUILD_ID");
  if (existsSync(buildId) && existsSync(stamp) && readFileSync(stamp, "utf8") === digest) return { built: false };
  log("Building the app (next build); this happens only when the sources change…");
  const result = spawnSync(process.execPath, [path.join(projectRoot, "node_modules", "next", "dist", "bin", "next"), "build"], {
    cwd: projectRoot,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
  });
  if (result.status !== 0) throw new Error(`next build failed with exit code ${String(result.status)}`);
  writeFileSync(stamp, digest);
  return { built: true };
}

function inputsDigest(): string {
  const hash = createHash("sha256");
  for (const input of inputs) addPath(hash, path.join(projectRoot, input));
  return hash.digest("hex");
}

function addPath(hash: ReturnType<typeof createHash>, file: string): void {
  if (!existsSync(file)) return;
  if (statSync(file).isDirectory()) {
    for (const name of readdirSync(file).sort()) if (!skip.has(name)) addPath(hash, path.join(file, name));
    return;
  }
  hash.update(path.relative(projectRoot, file)).update("\0").update(readFileSync(file)).update("\0");
}
