// Prisma's schema engine compiled to WebAssembly, driven through the pg driver adapter.
// Why: the Prisma CLI downloads a native schema-engine binary at run time, which is not
// reachable here (and not wanted in production). The wasm engine does the same work
// (applyMigrations, diff, ...) over a JS driver adapter, fully offline.
import { readdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import {
  bindMigrationAwareSqlAdapterFactory,
  ColumnTypeEnum,
  mockAdapter,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
  type SqlQueryable,
} from "@prisma/driver-adapter-utils";
// The package's main entry does `import * as wasm from "./x.wasm"` (bundler style), which
// Node 20 refuses without --experimental-wasm-modules. So import the JS glue only and
// instantiate the .wasm ourselves (see loadWasm).
import * as glue from "@prisma/schema-engine-wasm/schema_engine_bg";
import type { MigrationList, SchemaEngine, SchemaFilter } from "@prisma/schema-engine-wasm/schema_engine_bg";

export type { SchemaEngine };

/** Nothing is "externally managed": every table/enum is compared and migrated. */
export const NO_FILTER: SchemaFilter = { externalTables: [], externalEnums: [] };

/**
 * Read `<dir>/<ts>_<name>/migration.sql` the way the Prisma CLI does (same layout, same
 * sort), so the engine's names and checksums match `prisma migrate deploy`.
 * A missing directory is an empty history.
 */
export async function loadMigrations(migrationsDir: string): Promise<MigrationList> {
  const baseDir = path.resolve(migrationsDir);
  const lockPath = "migration_lock.toml";
  // The engine takes the connector from this file and refuses a migrations diff without it;
  // the CLI writes it with the first migration. Tollgate is PostgreSQL-only, so default it.
  const lockContent = await readFile(path.join(baseDir, lockPath), "utf8").catch(() => 'provider = "postgresql"\n');
  const entries = await readdir(baseDir, { withFileTypes: true }).catch(() => []);
  const dirs = entries.filter((e) => e.isDirectory()).map((e) => e.name).sort((a, b) => a.localeCompare(b));
  const migrationDirectories = await Promise.all(
    dirs.map(async (name) => ({
      path: name,
      migrationFile: {
        path: "migration.sql",
        // Unreadable file: hand the error to the engine, which reports it per migration.
        content: await readFile(path.join(baseDir, name, "migration.sql"), "utf8").then(
          (value) => ({ tag: "ok" as const, value }),
          (e: unknown) => ({ tag: "error" as const, value: e instanceof Error ? e.message : String(e) }),
        ),
      },
    })),
  );
  return { baseDir, lockfile: { path: lockPath, content: lockContent }, shadowDbInitScript: "", migrationDirectories };
}

let wasmReady: Promise<void> | undefined;

// On a Rust panic the glue calls globalThis.PRISMA_WASM_PANIC_REGISTRY.set_message(msg)
// (the Prisma CLI installs it). Without it the panic turns into an unrelated TypeError.
// We keep the last message and append it to the RuntimeError that the engine call throws.
const panicRegistry = { message: "", set_message(m: string) { this.message = m; } };
(globalThis as { PRISMA_WASM_PANIC_REGISTRY?: typeof panicRegistry }).PRISMA_WASM_PANIC_REGISTRY ??= panicRegistry;

// wasm-bindgen glue keeps the instance in a module-level variable: instantiate once per process.
function loadWasm(): Promise<void> {
  wasmReady ??= (async () => {
    const require = createRequire(import.meta.url);
    const gluePath = require.resolve("@prisma/schema-engine-wasm/schema_engine_bg");
    const bytes = await readFile(path.join(path.dirname(gluePath), "schema_engine_bg.wasm"));
    // The .wasm imports every host function from the module "./schema_engine_bg.js".
    const { instance } = await WebAssembly.instantiate(bytes, { "./schema_engine_bg.js": unrefTimers(glue) });
    glue.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
  })();
  return wasmReady;
}

// The engine arms a 10 s setTimeout per command (a timeout race) and the glue never clears
// it, which kept every CLI run alive ~10 s after finishing. Unref those timers: while the
// engine really waits on the database, the pg sockets keep the process alive anyway.
function unrefTimers(mod: typeof glue): WebAssembly.ModuleImports {
  const imports: WebAssembly.ModuleImports = { ...(mod as unknown as WebAssembly.ModuleImports) };
  for (const [name, fn] of Object.entries(imports)) {
    if (!name.startsWith("__wbg_setTimeout_") || typeof fn !== "function") continue;
    imports[name] = (...args: unknown[]): unknown => {
      const t = (fn as (...a: unknown[]) => unknown)(...args);
      if (t && typeof t === "object" && "unref" in t && typeof t.unref === "function") t.unref();
      return t;
    };
  }
  return imports;
}

/** Same URL with another database name (path component). */
export function withDatabase(databaseUrl: string, database: string): string {
  const u = new URL(databaseUrl);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

// The engine's introspection queries select PostgreSQL `"char"` columns (pg_class.relkind,
// pg_constraint.contype, ...) and expect them typed as Character. @prisma/adapter-pg 7.10.1
// has no mapping for that type (OID 18) and fails with "Column type 'char' could not be
// deserialized" (typing them Text instead makes the engine panic). So: at the pg level relabel
// those fields as text (OID 25, which the adapter accepts; values are one-letter strings
// either way) and remember their positions keyed by the rows array, which the adapter passes
// through unchanged; then fix up the adapter's columnTypes. Only the pools created here are
// patched; the app's own pool is untouched.
const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;
const charColumns = new WeakMap<object, number[]>();
function relabelChar(res: unknown): void {
  for (const r of Array.isArray(res) ? res : [res]) {
    if (!(r instanceof Object && "fields" in r && "rows" in r && Array.isArray(r.fields) && Array.isArray(r.rows))) continue;
    const idx: number[] = [];
    (r.fields as pg.FieldDef[]).forEach((f, i) => {
      if (f.dataTypeID !== PG_CHAR_OID) return;
      f.dataTypeID = PG_TEXT_OID;
      idx.push(i);
    });
    if (idx.length > 0) charColumns.set(r.rows, idx);
  }
}
function restoreCharTypes<Q extends SqlQueryable>(queryable: Q): Q {
  const queryRaw = queryable.queryRaw.bind(queryable);
  queryable.queryRaw = async (q) => {
    const res = await queryRaw(q);
    for (const i of charColumns.get(res.rows) ?? []) res.columnTypes[i] = ColumnTypeEnum.Character;
    return res;
  };
  return queryable;
}
// pg's query() has many overloads (promise, callback, submittable): wrap it generically.
function relabelCharColumns(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const wrapped = (...args: unknown[]): unknown => {
    const cb = args.findIndex((a) => typeof a === "function");
    if (cb >= 0) {
      const done = args[cb] as (err: unknown, res: unknown) => void;
      args[cb] = (err: unknown, res: unknown) => {
        relabelChar(res);
        done(err, res);
      };
    }
    const ret = query(...args);
    if (cb >= 0 || !(ret instanceof Promise)) return ret;
    return ret.then((res: unknown) => {
      relabelChar(res);
      return res;
    });
  };
  Object.assign(client, { query: wrapped });
}

async function connectAdapter(url: string, max: number): Promise<SqlDriverAdapter> {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on("connect", relabelCharColumns); // emitted for each new client, before first use
  const adapter = await new PrismaPg(pool, { disposeExternalPool: true }).connect();
  restoreCharTypes(adapter);
  const startTransaction = adapter.startTransaction.bind(adapter);
  adapter.startTransaction = async (isolation) => restoreCharTypes(await startTransaction(isolation));
  // adapter-pg's executeScript splits the script on every ";", which breaks any
  // `$$ ... ; ... $$` body (plpgsql functions) in a migration.sql. Send the script whole
  // instead, like the native engine: a parameterless query uses PostgreSQL's simple-query
  // protocol, which parses multi-statement scripts itself (as one implicit transaction).
  // Going through executeRaw keeps the adapter's error mapping ("Error querying the database").
  adapter.executeScript = async (script) => {
    await adapter.executeRaw({ sql: script, args: [], argTypes: [] });
  };
  return adapter;
}

// Why not PrismaPg's own connectToShadowDb: when PrismaPg is given a connection string it
// spreads `{ connectionString, database: shadow }` into pg, and pg lets the connection
// string's database win -- the "shadow" would be the main database. So we create a
// throwaway database ourselves, connect to it by URL and drop it on dispose.
function pgFactory(databaseUrl: string, opened: SqlDriverAdapter[]): SqlMigrationAwareDriverAdapterFactory {
  const track = <T extends SqlDriverAdapter>(a: T): T => {
    opened.push(a);
    return a;
  };
  return {
    provider: "postgres",
    adapterName: "@prisma/adapter-pg",
    connect: async () => track(await connectAdapter(databaseUrl, 2)),
    connectToShadowDb: async () => {
      const name = `prisma_migrate_shadow_db_${crypto.randomUUID().replaceAll("-", "")}`;
      await adminQuery(databaseUrl, `CREATE DATABASE "${name}"`);
      const shadow = await connectAdapter(withDatabase(databaseUrl, name), 1);
      const dispose = shadow.dispose.bind(shadow);
      shadow.dispose = async () => {
        await dispose();
        await adminQuery(databaseUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      };
      return track(shadow);
    },
  };
}

async function adminQuery(databaseUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

// For diffs that involve no database (schema file vs empty). The engine still probes the
// server once when it is constructed (namespace exists? version()?); answer that probe with
// a fixed identity and refuse anything else, so such a diff can never touch a database.
const OFFLINE_PG_VERSION = { text: "PostgreSQL 16.0 (offline)", num: 160000 };
function offlineFactory(): SqlMigrationAwareDriverAdapterFactory {
  const adapter = (): SqlDriverAdapter => ({
    ...mockAdapter("postgres"),
    adapterName: "@prisma/adapter-pg",
    queryRaw: async (q) => {
      if (!q.sql.includes("version()")) throw new Error(`offline schema engine has no database (query: ${q.sql})`);
      return {
        columnNames: ["exists", "version", "numeric_version"],
        columnTypes: [ColumnTypeEnum.Boolean, ColumnTypeEnum.Text, ColumnTypeEnum.Int32],
        rows: [[true, OFFLINE_PG_VERSION.text, OFFLINE_PG_VERSION.num]],
      };
    },
    dispose: async () => {},
  });
  return { provider: "postgres", adapterName: "@prisma/adapter-pg", connect: async () => adapter(), connectToShadowDb: async () => adapter() };
}

export interface EngineHandle {
  engine: SchemaEngine;
  /** Replace an engine error that stands for a driver (JS) error by the original one. */
  unwrapError(e: unknown): unknown;
  /** Frees the wasm engine and closes every pool it opened (else the process would not exit). */
  close(): Promise<void>;
}

/**
 * Open a schema engine. With `databaseUrl` it talks to that PostgreSQL (and may create a
 * temporary shadow database next to it); without, it gets an offline stub, enough for
 * diffs between schema files / empty.
 * `schemaFiles`: [path, content] pairs of the Prisma schema, if the command needs one.
 */
export async function openEngine(opts: {
  databaseUrl?: string;
  schemaFiles?: [string, string][];
  log?: (msg: string) => void;
}): Promise<EngineHandle> {
  await loadWasm();
  const opened: SqlDriverAdapter[] = [];
  const factory = opts.databaseUrl ? pgFactory(opts.databaseUrl, opened) : offlineFactory();
  // The binding wraps every adapter call so JS errors are kept in an error registry
  // (the engine only sees an id); we use it to rethrow the original driver error.
  const bound = bindMigrationAwareSqlAdapterFactory(factory);
  const log = opts.log ?? (() => {});
  const unwrap = (e: unknown): unknown => {
    // Adapter (JS) failures reach us as "External error id#N": fetch the original error.
    const id = e instanceof Error ? /External error id#(\d+)/.exec(e.message)?.[1] : undefined;
    return (id !== undefined && bound.errorRegistry.consumeError(Number(id))?.error) || e;
  };
  let engine: SchemaEngine;
  try {
    // `datamodels` must be undefined or non-empty (the engine rejects []).
    const datamodels = opts.schemaFiles && opts.schemaFiles.length > 0 ? opts.schemaFiles : undefined;
    engine = await glue.SchemaEngine.new({ datamodels }, (msg: string) => log(String(msg)), bound);
  } catch (e) {
    await Promise.allSettled(opened.map((a) => a.dispose()));
    throw unwrap(e);
  }
  return {
    engine,
    unwrapError: unwrap,
    close: async () => {
      engine.free();
      await Promise.allSettled(opened.splice(0).map((a) => a.dispose()));
    },
  };
}

/**
 * Run one engine command and always close the engine. Call methods on the engine object
 * itself (`e => e.diff(...)`): detaching them loses the wasm pointer (`__wbg_ptr`).
 */
export async function withEngine<T>(
  opts: Parameters<typeof openEngine>[0],
  fn: (engine: SchemaEngine) => Promise<T>,
): Promise<T> {
  const h = await openEngine(opts);
  try {
    return await fn(h.engine);
  } catch (e) {
    throw h.unwrapError(e);
  } finally {
    await h.close();
  }
}
