import type { RunAs } from "./run-as-postgres-user";

/** Options shared by every spawn of a PostgreSQL binary (initdb, postgres). */
export function spawnOptions(runAs: RunAs | null): { uid?: number; gid?: number; cwd: string; env: NodeJS.ProcessEnv } {
  return {
    ...(runAs ?? {}),
    cwd: "/", // the caller's cwd may not be accessible to the postgres user
    // Forces English, locale-independent messages so READY_MARKER / bind errors can be matched.
    env: { ...process.env, LC_ALL: "C" },
  };
}
