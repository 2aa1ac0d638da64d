import path from "node:path";
import type { TestProject } from "vitest/node";
import { ensureBuild, inputsDigest } from "@/lib/cli/ensure-build";
import { pruneOldBuilds } from "./test-builds";
import { startEmbeddedPostgres } from "@/lib/db/embedded-postgres";
import { createTemplateDatabase, dropDatabase } from "./test-database";

declare module "vitest" {
  export interface ProvidedContext {
    serverUrl: string;
    templateDb: string;
    distDir: string;
  }
}

// Once per run: a PostgreSQL server (DATABASE_URL's, or an embedded one), one migrated
// template database that every test file clones, and an up-to-date `next build`.
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // PostgreSQL's routine lines (checkpoints, shutdown) would land after the closing summary line.
  const log = (msg: string) => {
    if (!msg.startsWith("postgres: ") || /\b(ERROR|FATAL|PANIC)\b/.test(msg)) process.stdout.write(`[setup] ${msg}\n`);
  };
  let stopEmbedded: (() => Promise<void>) | undefined;
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const embedded = await startEmbeddedPostgres({ dataDir: path.resolve(".tollgate", "test-postgres"), log });
    serverUrl = embedded.databaseUrl;
    stopEmbedded = embedded.stop;
    log(`embedded PostgreSQL on port ${embedded.port}`);
  }
  const templateDb = await createTemplateDatabase(serverUrl);
  log(`template database ${templateDb}`);
  // Each source version gets its own build folder: a rebuild (say, by another test run on
  // this machine) never replaces files under a server that is still running.
  const { distDir } = ensureBuild({ distDir: path.join(".tollgate", "next-test", inputsDigest().slice(0, 16)), log });
  pruneOldBuilds(path.resolve(".tollgate", "next-test"), 6);
  project.provide("distDir", distDir);
  project.provide("serverUrl", serverUrl);
  project.provide("templateDb", templateDb);
  return async () => {
    await dropDatabase(serverUrl, templateDb);
    await stopEmbedded?.();
  };
}
