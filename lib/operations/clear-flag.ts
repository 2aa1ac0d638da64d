import { z } from "zod";
import type { Db } from "@/lib/db";
import { ProblemError } from "@/lib/http/problem";
import { isStorableDate } from "@/lib/db/storable-date";

// When a flag an operator read was raised (its identity: a flag raised again has a new time).
// zod takes year 0000, which PostgreSQL has not (a 500 from the ::timestamptz cast).
export const flagTimeSchema = z.iso.datetime().refine((at) => isStorableDate(new Date(at)), "Not a time any flag was raised at.");

// What an operator sends to take a flag down: the flag they read (its time) and why it needs
// no more attention (what they checked). Both required: the audit log keeps the reason.
export const clearFlagSchema = z
  .object({
    flaggedAt: flagTimeSchema,
    reason: z.string().trim().min(1, "A reason is required: say what you checked.").max(2000),
  })
  .strict();

export type ClearFlag = z.infer<typeof clearFlagSchema>;

// Clears an operation's flag (tollgate_clear_flag: compare-and-set on the flag read, audited in
// the same transaction). The recorded outcome is not touched: settling it is a resolve.
export async function clearFlag(options: { db: Db; tenantId: string; operationId: string; input: ClearFlag; actor: string }): Promise<void> {
  const { input } = options;
  const rows = await options.db.$queryRaw<{ r: { code: string; flagReason?: string } }[]>`
    SELECT tollgate_clear_flag(${options.tenantId}, ${options.operationId}, ${input.flaggedAt}::timestamptz, ${input.reason}, ${options.actor}) AS r`;
  const r = rows[0]?.r;
  switch (r?.code) {
    case "cleared":
      return;
    case "operation-not-found":
      throw new ProblemError("operation-not-found", "No operation with this id exists in your tenant.");
    case "not-flagged":
      throw new ProblemError("invalid-state", "This operation is not flagged (someone may have cleared the flag already); reload the page.");
    case "flag-changed":
      throw new ProblemError("invalid-state", `The operation was flagged again since you read it: ${r.flagReason ?? "new evidence"}. Reload and read it first.`, {
        extras: { flagReason: r.flagReason ?? null },
      });
  }
  throw new Error(`tollgate_clear_flag returned an unexpected answer: ${r?.code}`);
}
