import { readdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";

// Keeps the newest `keep` per-version test builds; older ones are from sources long gone.
export function pruneOldBuilds(root: string, keep: number): void {
  let dirs: { dir: string; mtime: number }[];
  try {
    dirs = readdirSync(root)
      .filter((name) => !name.endsWith(".build-lock"))
      .map((name) => ({ dir: path.join(root, name), mtime: statSync(path.join(root, name)).mtimeMs }));
  } catch {
    return;
  }
  for (const { dir } of dirs.sort((a, b) => b.mtime - a.mtime).slice(keep)) rmSync(dir, { recursive: true, force: true });
}
