import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { localDir } from "@/lib/cli/paths";

// TOLLGATE_SECRET_KEY if set; otherwise one generated once under .tollgate/ (mode 0600)
// so a newcomer's `npm start` works and keeps the same downstream keys across restarts.
export function serverSecret(): string {
  const fromEnv = process.env.TOLLGATE_SECRET_KEY;
  if (fromEnv) return fromEnv;
  const file = path.join(localDir, "secret-key");
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    mkdirSync(localDir, { recursive: true });
    const secret = randomBytes(32).toString("base64url");
    writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: "wx" });
    return secret;
  }
}
