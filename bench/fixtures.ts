import { writeFileSync } from "node:fs";
import type pg from "pg";
import { sha256Hex } from "@/lib/crypto/digest";
import { newOperationId } from "@/lib/crypto/ids";
import { canonicalJson, type Json } from "@/lib/operations/canonical-json";
import { downstreamKey } from "@/lib/operations/downstream-key";
import { fingerprint } from "@/lib/operations/fingerprint";
import type { BenchWorld } from "./database";

// The exact statements lib/operations/claim-operation.ts and complete-operation.ts send through
// Prisma's $queryRaw (same function, same parameters, same casts), and the parameters they
// compute, so the pg floor measures the database doing precisely the server's work.

export const CLAIM_SQL = `SELECT tollgate_claim($1, $2, $3, $4, $5,
      $6, $7::jsonb, $8, $9,
      $10, $11,
      $12) AS r`;

export const COMPLETE_SQL = `SELECT tollgate_complete($1, $2, $3::text[], $4, $5,
      $6, $7, $8::jsonb, $9::jsonb,
      $10::jsonb, $11, $12) AS r`;

// The claim body the Lua scripts send; keep bench/lua/claim-*.lua in step.
export const CLAIM_ARGS = { to: "customer@example.com", amount: 4200, currency: "eur" } satisfies Json;

export function claimParams(world: BenchWorld, secret: string, idempotencyKey: string): unknown[] {
  const args = CLAIM_ARGS;
  const operationId = newOperationId();
  return [
    world.tenantId,
    world.agent.id,
    world.agent.principal,
    world.tool,
    sha256Hex(idempotencyKey),
    fingerprint(world.tool, args),
    canonicalJson(args),
    null,
    null,
    operationId,
    downstreamKey({ secret, tenantId: world.tenantId, operationId }),
    `api-key:${world.agent.id}`,
  ];
}

// The complete the Lua script sends for (operationId, token), as the server turns it into parameters.
export function completeParams(world: BenchWorld, operationId: string, fencingToken: string): unknown[] {
  const result: Json = { statusCode: 201, body: { id: `ch_${fencingToken}`, amount: 4200 }, resourceId: `ch_${fencingToken}` };
  const digest = sha256Hex(
    canonicalJson({ fencingToken, outcome: "succeeded", retryable: false, result, provider: null, error: null }),
  );
  return [world.tenantId, world.agent.id, [], operationId, fencingToken, "succeeded", false, JSON.stringify(result), null, null, digest, `api-key:${world.agent.id}`];
}

// Claims n operations in one statement through tollgate_claim itself (the function the server
// calls), under keys `${prefix}${0..n-1}`: what completes, replays and 409s then work on.
function batchClaimSql(): string {
  return `SELECT tollgate_claim($1, $2, $3, $4, encode(sha256(convert_to($5::text || g, 'UTF8')), 'hex'), $6, $7::jsonb, NULL, NULL,
      'op_' || replace(gen_random_uuid()::text, '-', ''), 'dk_' || replace(gen_random_uuid()::text, '-', ''), $8) AS r
    FROM generate_series(0, $9::int - 1) AS g`;
}

function batchParams(world: BenchWorld, prefix: string, n: number): unknown[] {
  const args = CLAIM_ARGS;
  return [world.tenantId, world.agent.id, world.agent.principal, world.tool, prefix, fingerprint(world.tool, args), canonicalJson(args), `api-key:${world.agent.id}`, n];
}

export type Claimed = { operationId: string; fencingToken: string };

export async function claimBatch(pool: pg.Pool, world: BenchWorld, prefix: string, n: number): Promise<Claimed[]> {
  const { rows } = await pool.query<{ code: string; id: string; token: string }>(
    `SELECT r->>'code' AS code, r->'op'->>'operationId' AS id, r->'attempt'->>'fencingToken' AS token FROM (${batchClaimSql()}) s`,
    batchParams(world, prefix, n),
  );
  const wrong = rows.find((r) => r.code !== "created");
  if (wrong) throw new Error(`preparing claims under ${prefix}: tollgate_claim answered ${wrong.code}`);
  return rows.map((r) => ({ operationId: r.id, fencingToken: r.token }));
}

// Completes need operations claimed beforehand, with their fencing tokens: claimed through
// tollgate_claim in one statement, written to `file` as "operationId fencingToken" lines for
// bench/lua/complete.lua.
export async function writeCompletesFile(pool: pg.Pool, world: BenchWorld, prefix: string, n: number, file: string): Promise<string> {
  const claimed = await claimBatch(pool, world, prefix, n);
  writeFileSync(file, claimed.map((c) => `${c.operationId} ${c.fencingToken}`).join("\n") + "\n");
  return file;
}

// Claims and completes (succeeded, with a stored result) n operations: the replay pool.
export async function succeededBatch(pool: pg.Pool, world: BenchWorld, prefix: string, n: number): Promise<void> {
  const { rows } = await pool.query<{ code: string; n: string }>(
    `WITH c AS MATERIALIZED (${batchClaimSql()})
     SELECT tollgate_complete($1, $2, '{}'::text[], c.r->'op'->>'operationId', (c.r->'attempt'->>'fencingToken')::bigint, 'succeeded', false,
       jsonb_build_object('statusCode', 201, 'body', jsonb_build_object('id', 'ch_' || (c.r->'attempt'->>'fencingToken'), 'amount', 4200),
         'resourceId', 'ch_' || (c.r->'attempt'->>'fencingToken')), NULL, NULL, md5(c.r::text), $8)->>'code' AS code
     FROM c`,
    batchParams(world, prefix, n),
  );
  const wrong = rows.find((r) => r.code !== "completed");
  if (wrong) throw new Error(`preparing the replay pool: tollgate_complete answered ${wrong.code}`);
}

// The key pools replays and 409s cycle over: succeeded operations, and ones whose lease is live
// (the bench tool's lease is 3600 s).
export const POOL_SIZE = 1000;

export async function prepareKeyPools(pool: pg.Pool, world: BenchWorld): Promise<void> {
  await succeededBatch(pool, world, "replay-", POOL_SIZE);
  await claimBatch(pool, world, "conflict-", POOL_SIZE);
}

// The pg floor's key prefix: a pool's for replays and 409s, `fresh` for new claims.
export function floorKeyPrefix(scenario: string, fresh: string): string {
  return scenario === "replay" ? "replay-" : scenario === "conflict" ? "conflict-" : fresh;
}
