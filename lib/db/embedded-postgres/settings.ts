// Fixed settings of the embedded server. The password is not a secret: see index.ts.
export const DB_NAME = "tollgate";
export const DB_USER = "tollgate";
export const DB_PASSWORD = "tollgate";
export const HOST = "127.0.0.1";
/** OS account postgres runs as when we are root (postgres refuses to run as root). */
export const OS_USER = "postgres";

export const READY_MARKER = "database system is ready to accept connections";
/** Generous: after an unclean stop postgres replays WAL before it is ready. */
export const READY_TIMEOUT_MS = 60_000;
export const PORT_ATTEMPTS = 5;

export function databaseUrl(port: number): string {
  return `postgresql://${DB_USER}:${DB_PASSWORD}@${HOST}:${port}/${DB_NAME}`;
}
