import pg from "pg";
import { createDatabase, dropDatabase, prepareWorld, DEFAULT_SERVER_URL } from "./database";
import { seedOperations, countOperations } from "./seed-operations";
import { claimBatch, succeededBatch } from "./fixtures";
const name = "tollgate_bench_try";
await dropDatabase(DEFAULT_SERVER_URL, name);
const url = await createDatabase(DEFAULT_SERVER_URL, name);
let t = performance.now();
const world = await prepareWorld(url, "/tmp/migs");
console.log("world", (performance.now() - t) / 1000, world);
const pool = new pg.Pool({ connectionString: url, max: 2 });
t = performance.now();
const c = await claimBatch(pool, world, "try-a-", 5000);
console.log("claim 5000", (performance.now() - t) / 1000, c[0]);
t = performance.now();
await succeededBatch(pool, world, "try-b-", 1000);
console.log("succeeded 1000", (performance.now() - t) / 1000);
for (const [n, tag] of [[100000, "a"], [900000, "b"]] as const) {
  const r = await seedOperations({ pool, world, count: n, tag });
  console.log("seed", n, r, await countOperations(pool));
}
console.log((await pool.query("select state, count(*) from operation group by 1 order by 1")).rows);
console.log((await pool.query("select pg_size_pretty(pg_total_relation_size('operation')) o, pg_size_pretty(pg_total_relation_size('attempt')) a")).rows);
await pool.end();
await dropDatabase(DEFAULT_SERVER_URL, name);
