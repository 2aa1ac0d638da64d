-- Where the arguments of the latest 422 (same Idempotency-Key, other arguments) differed from
-- the stored ones: { "paths": ["args.amount", …], "at": "…" }, paths only, never a value. The
-- claim itself counts the 422 (mismatch_count); the paths are written after it, only on that path,
-- so the operator's trace can say what the agent changed.
ALTER TABLE "operation" ADD COLUMN     "last_mismatch" JSONB;
