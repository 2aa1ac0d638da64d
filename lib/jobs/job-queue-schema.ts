import { Logger, runMigrations } from "graphile-worker";

// The job queue (graphile-worker) lives in its own schema, `graphile_worker`, next to ours.
// It is installed and upgraded by lib/db/migrate.ts right after our own migrations, so every
// database Tollgate migrates (npm start, the CLI, the tests' template) has it: the outbox
// triggers call graphile_worker.add_job() inside the transaction that changes the state.
export async function migrateJobQueue(options: { databaseUrl: string; log?: (msg: string) => void }): Promise<void> {
  await runMigrations({ connectionString: options.databaseUrl, maxPoolSize: 1, logger: quietLogger(options.log) });
}

// graphile-worker logs through its own Logger; migrations only need warnings and errors.
export function quietLogger(log: (msg: string) => void = () => {}): Logger {
  return new Logger(() => (level, message) => {
    if (level === "error" || level === "warning") log(`job queue: ${message}`);
  });
}
