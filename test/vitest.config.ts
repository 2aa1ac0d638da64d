import path from "node:path";
import { defineConfig } from "vitest/config";

const root = path.resolve(import.meta.dirname, "..");

// API tests start real `next start` servers on databases cloned from one migrated template;
// two files run at once, which is what this 2-core machine can carry.
export default defineConfig({
  root,
  resolve: { alias: { "@": root } },
  test: {
    include: ["test/unit/**/*.test.ts", "test/api/**/*.test.ts", "test/e2e/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    reporters: ["default", "./test/support/summary-reporter.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    fileParallelism: true,
    maxWorkers: 2,
    pool: "forks",
  },
});
