import { promises as fs } from "node:fs";
import { errMessage } from "./errors";

/** Kept in `<dataDir>.state.json`, beside the data dir (see index.ts). */
export type ServerState = {
  port?: number;
  /** pid of the node process that spawned the postmaster (its parent). */
  ownerPid?: number;
  postmasterPid?: number;
};

const stateFile = (dataDir: string): string => `${dataDir}.state.json`;

export async function readServerState(dataDir: string): Promise<ServerState> {
  try {
    const raw = JSON.parse(await fs.readFile(stateFile(dataDir), "utf8")) as unknown;
    return raw !== null && typeof raw === "object" ? (raw as ServerState) : {};
  } catch {
    return {}; // missing/corrupt: it's only an optimisation + safety hint
  }
}

export async function writeServerState(dataDir: string, state: ServerState, log: (msg: string) => void): Promise<void> {
  const file = stateFile(dataDir);
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
