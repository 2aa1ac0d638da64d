import { pruneOperations } from "@/lib/operations/prune-operations";
import { pruneWebhookPayloads } from "@/lib/webhooks/prune-webhook-payloads";
import { pruneEndedSessions } from "@/lib/auth/ended-sessions";
import { pruneSignInFailures } from "@/lib/auth/sign-in-throttle";
import { defaultWorkerSettings } from "@/lib/worker/worker-settings";
import { pruneOutbox } from "@/lib/outbox/prune-outbox";
import { parseFlags } from "@/lib/cli/commands/run-command";
import { withDb } from "@/lib/cli/commands/with-db";

export async function pruneCommand(args: string[]): Promise<number> {
  parseFlags(args, {});
  // What the worker's hourly prune does (lib/worker/worker-tasks.ts), for deployments that run
  // this from cron instead; the outbox with the worker's default retention.
  const { deleted, payloads, events, sessions } = await withDb(async (db) => ({
    ...(await pruneOperations({ db })),
    payloads: await pruneWebhookPayloads(db),
    events: await pruneOutbox({ db, retentionDays: defaultWorkerSettings.outboxRetentionDays }),
    sessions: (await pruneEndedSessions(db)) + (await pruneSignInFailures(db)),
  }));
  process.stdout.write(`Pruned ${deleted} terminal operation(s) past their result retention.\n`);
  process.stdout.write(`Pruned ${payloads} webhook payload(s) past their connection's payload retention.\n`);
  process.stdout.write(`Pruned ${events} outbox event(s) older than ${defaultWorkerSettings.outboxRetentionDays} days with no delivery pending.\n`);
  process.stdout.write(`Pruned ${sessions} signed-out console session(s) and stale sign-in failure count(s).\n`);
  return 0;
}
