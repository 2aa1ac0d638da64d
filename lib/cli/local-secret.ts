import { randomBytes } from "node:crypto";
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CliError } from "@/lib/cli/commands/run-command";
import { localDir } from "@/lib/cli/paths";

// TOLLGATE_SECRET_KEY if set; otherwise one generated once under .tollgate/ (mode 0600)
// so a newcomer's `npm start` works and keeps the same downstream keys across restarts.
// (A process on another machine would generate a key of its own: lib/cli/secret-key-check.ts
// stops it at start.)
export function serverSecret(): string {
  const fromEnv = process.env.TOLLGATE_SECRET_KEY;
  if (fromEnv !== undefined && fromEnv !== "") {
    if (fromEnv.length < 32) throw new CliError("TOLLGATE_SECRET_KEY must be at least 32 characters");
    return fromEnv;
  }
  const file = path.join(localDir, "secret-key");
  const existing = readKey(file);
  if (existing) return existing;
  // Written whole under a temporary name, then linked into place: two processes starting at once
  // never read a half-written file, and the loser of the link reads the winner's key.
  mkdirSync(localDir, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600 });
  try {
    linkSync(tmp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    rmSync(tmp, { force: true });
  }
  const key = readKey(file);
  if (!key) throw new CliError(`${file} is empty: delete it to generate a new key, or set TOLLGATE_SECRET_KEY`);
  return key;
}

function readKey(file: string): string | null {
  try {
    return readFileSync(file, "utf8").trim() || null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}
