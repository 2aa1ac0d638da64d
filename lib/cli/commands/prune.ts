import { pruneOperations } from "@/lib/operations/prune-operations";
import { pruneWebhookPayloads } from "@/lib/webhooks/prune-webhook-payloads";
import { pruneEndedSessions } from "@/lib/auth/ended-sessions";
import { pruneSignInFailures } from "@/lib/auth/sign-in-throttle";
import { parseFlags } from "@/lib/cli/commands/run-command";
import { withDb } from "@/lib/cli/commands/with-db";

export async function pruneCommand(args: string[]): Promise<number> {
  parseFlags(args, {});
  const { deleted, payloads, sessions } = await withDb(async (db) => ({
    ...(await pruneOperations({ db })),
    payloads: await pruneWebhookPayloads(db),
    sessions: (await pruneEndedSessions(db)) + (await pruneSignInFailures(db)),
  }));
  process.stdout.write(`Pruned ${deleted} terminal operation(s) past their result retention.\n`);
  process.stdout.write(`Pruned ${payloads} webhook payload(s) past their connection's payload retention.\n`);
  process.stdout.write(`Pruned ${sessions} signed-out console session(s) and stale sign-in failure count(s).\n`);
  return 0;
}
