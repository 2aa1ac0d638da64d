import { pruneOperations } from "@/lib/operations/prune-operations";
import { parseFlags } from "@/lib/cli/commands/run-command";
import { withDb } from "@/lib/cli/commands/with-db";

export async function pruneCommand(args: string[]): Promise<number> {
  parseFlags(args, {});
  const { deleted } = await withDb((db) => pruneOperations({ db }));
  process.stdout.write(`Pruned ${deleted} terminal operation(s) past their result retention.\n`);
  return 0;
}
