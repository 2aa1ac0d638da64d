import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redactDatabaseUrl } from "@/lib/cli/redact-database-url";
import { hmacBase64Url } from "@/lib/crypto/digest";
import { startTestApp, TEST_SECRET, type TestApp } from "../support/test-app";
import { fastWorkerFlags, startWorkerProcess } from "../support/worker-process";

// Every process holding TOLLGATE_SECRET_KEY must hold the same one: a worker started with
// another (a container without the variable generates its own) could open no stored secret, and
// would fail every delivery and probe quietly. The first start records an HMAC under its key in
// the database; a later start with another key stops with a message.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.stop();
});

const OTHER_KEY = "another-secret-key-0123456789abcdef-0123";

describe("the secret key check", () => {
  it("a worker with another key than the database's first refuses to start; TOLLGATE_SECRET_KEY_REPLACED=1 records the new one", async () => {
    const first = await startWorkerProcess(app.url, fastWorkerFlags);
    expect(await first.stop()).toBe(0);
    const stored = await app.db.secretKeyCheck.findUniqueOrThrow({ where: { id: 1 } });
    expect(stored.digest).toBe(hmacBase64Url(TEST_SECRET, "tollgate-secret-key-check-v1"));

    await expect(startWorkerProcess(app.url, fastWorkerFlags, { env: { TOLLGATE_SECRET_KEY: OTHER_KEY } })).rejects.toThrow(
      /TOLLGATE_SECRET_KEY differs from the one this database was first used with/,
    );

    const replaced = await startWorkerProcess(app.url, fastWorkerFlags, { env: { TOLLGATE_SECRET_KEY: OTHER_KEY, TOLLGATE_SECRET_KEY_REPLACED: "1" } });
    expect(await replaced.stop()).toBe(0);
    // Now the original key is the odd one out.
    await expect(startWorkerProcess(app.url, fastWorkerFlags)).rejects.toThrow(/differs/);
    const again = await startWorkerProcess(app.url, fastWorkerFlags, { env: { TOLLGATE_SECRET_KEY: OTHER_KEY } });
    expect(await again.stop()).toBe(0);
  });

  it("two processes starting at once on a fresh database with different keys: exactly one runs", async () => {
    await app.db.$executeRaw`DELETE FROM secret_key_check`;
    const results = await Promise.allSettled([
      startWorkerProcess(app.url, fastWorkerFlags),
      startWorkerProcess(app.url, fastWorkerFlags, { env: { TOLLGATE_SECRET_KEY: OTHER_KEY } }),
    ]);
    const running = results.filter((r) => r.status === "fulfilled");
    expect(running).toHaveLength(1);
    expect(results.find((r) => r.status === "rejected")?.reason).toMatchObject({ message: expect.stringMatching(/differs/) });
    for (const r of running) await r.value.stop();
  });

  it("a key shorter than 32 characters is refused before anything starts", async () => {
    await expect(startWorkerProcess(app.url, fastWorkerFlags, { env: { TOLLGATE_SECRET_KEY: "too-short" } })).rejects.toThrow(/at least 32 characters/);
  });
});

describe("the database URL as npm start prints it", () => {
  it.each([
    ["postgresql://app:S3cret@db.internal:5432/tollgate", "postgresql://app:***@db.internal:5432/tollgate"],
    ["postgresql://app:p@ss@db.internal/tollgate", "postgresql://app:***@db.internal/tollgate"],
    ["postgresql://app@db.internal/tollgate?password=S3cret&sslmode=require", "postgresql://app@db.internal/tollgate?password=***&sslmode=require"],
    ["postgresql://app@db.internal/tollgate", "postgresql://app@db.internal/tollgate"],
  ])("%s → %s", (url, printed) => {
    expect(redactDatabaseUrl(url)).toBe(printed);
  });
});
