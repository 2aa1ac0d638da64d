import path from "node:path";
import pg from "pg";
import { hmacBase64Url } from "@/lib/crypto/digest";
import { CliError } from "@/lib/cli/commands/run-command";
import { localDir, shownPath } from "@/lib/cli/paths";

const CHECK_INPUT = "tollgate-secret-key-check-v1";

// Every process that signs, seals or derives keys (the web app `npm start` launches, every worker)
// must hold the same TOLLGATE_SECRET_KEY. The first one records an HMAC of a fixed string under
// its key; the rest compare (insert-or-keep: no check-then-insert). A mismatch stops the process
// with a message instead of letting it fail every delivery and probe quietly.
// TOLLGATE_SECRET_KEY_REPLACED=1 records the new key's HMAC: for a deliberate change (the stored
// subscription and webhook secrets then need setting again; the README says which). Set it for one
// start only: while it is set, this process's key wins whatever the database holds.
export async function assertSameSecretKey(databaseUrl: string, secret: string): Promise<void> {
  const digest = hmacBase64Url(secret, CHECK_INPUT);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    if (process.env.TOLLGATE_SECRET_KEY_REPLACED === "1") {
      await client.query(
        `INSERT INTO secret_key_check (id, digest) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET digest = EXCLUDED.digest, created_at = now()`,
        [digest],
      );
      return;
    }
    // Inserts ours, or (on conflict) locks the stored row and returns it unchanged: either way the
    // digest that won, even when another process inserted it a moment ago (a plain SELECT beside
    // ON CONFLICT DO NOTHING reads the statement's snapshot and could see no row at all).
    const { rows } = await client.query<{ digest: string }>(
      `INSERT INTO secret_key_check (id, digest) VALUES (1, $1)
       ON CONFLICT (id) DO UPDATE SET digest = secret_key_check.digest RETURNING digest`,
      [digest],
    );
    if (rows[0]?.digest !== digest) {
      throw new CliError(
        "TOLLGATE_SECRET_KEY differs from the one this database was first used with: this process could not open stored secrets, " +
          "its deliveries would be refused and its downstream keys would differ. Start it with the same TOLLGATE_SECRET_KEY as the " +
          `web app (without DATABASE_URL, \`npm start\` keeps one in ${shownPath(path.join(localDir, "secret-key"))}). If you changed ` +
          "the key on purpose, start once with TOLLGATE_SECRET_KEY_REPLACED=1.",
      );
    }
  } finally {
    await client.end();
  }
}
