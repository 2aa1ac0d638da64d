import path from "node:path";
import type { TestProject } from "vitest/node";
import { ensureBuild } from "@/lib/cli/ensure-build";
import { startEmbeddedPostgres } from "@/lib/db/embedded-postgres";
import { createTemplateDatabase, dropDatabase } from "./test-database";

declare module "vitest" {
  export interface ProvidedContext {
    serverUrl: string;
    templateDb: string;
  }
}

// Once per run: a PostgreSQL server (DATABASE_URL's, or an embedded one), one migrated
// template database that every test file clones, and an up-to-date `next build`.
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (msg: string) => process.stdout.write(`[setup] ${msg}\n`);
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
  ensureBuild({ log });
  project.provide("serverUrl", serverUrl);
  project.provide("templateDb", templateDb);
  return async () => {
    await dropDatabase(serverUrl, templateDb);
    await stopEmbedded?.();
  };
}
