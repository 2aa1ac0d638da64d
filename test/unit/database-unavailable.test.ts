import { createServer, type AddressInfo } from "node:net";
import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { describe, expect, inject, it } from "vitest";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { databaseNotReached, databaseUnavailable, prismaDatabaseUnavailable } from "@/lib/db/database-unavailable";
import { ProblemError } from "@/lib/http/problem";

// What a client is told when the database cannot serve a hot-path request: a 503 whose text says
// whether the statement can have taken effect, and nothing for errors that are not the database's.
const withCode = (code: string) => Object.assign(new Error(code), { code });

describe("databaseUnavailable", () => {
  it.each(["55P03", "57014", "40001", "40P01", "53100", "53200", "53300", "57P03", "25006", "ECONNREFUSED", "ENOTFOUND", "EHOSTUNREACH"])("%s: rolled back or never sent, nothing stored", (code) => {
    const problem = databaseUnavailable(withCode(code));
    expect(problem?.status).toBe(503);
    expect(problem?.headers).toEqual({ "retry-after": "1" });
    expect(problem?.message).toMatch(/nothing was stored\. Retry it\.$/);
    expect((problem?.cause as Error).message).toBe(code);
  });

  it.each(["57P01", "57P02", "57P04", "57P05", "ECONNRESET", "EPIPE", "ETIMEDOUT", "08006", "08003"])("%s: in doubt, repeat the same request", (code) => {
    const problem = databaseUnavailable(withCode(code));
    expect(problem?.status).toBe(503);
    expect(problem?.message).toMatch(/may or may not have been recorded\. Repeat the same request/);
  });

  // Review, 2026-12-01: on an open connection these fail statements the database may have
  // committed (Linux reports a kept ICMP unreachable when retransmission gives up).
  it.each(["EHOSTUNREACH", "ENETUNREACH"])("%s on connect stored nothing; on an open connection it is in doubt", (code) => {
    expect(databaseUnavailable(Object.assign(withCode(code), { syscall: "connect" }))?.message).toMatch(/nothing was stored/);
    expect(databaseUnavailable(Object.assign(withCode(code), { syscall: "read" }))?.message).toMatch(/may or may not have been recorded/);
  });

  // A hot-path connection that could not be opened: the statement never left the process.
  it.each([new Error("Connection terminated unexpectedly"), new Error("timeout expired"), withCode("ECONNREFUSED")])("databaseNotReached(%s): nothing stored", (error) => {
    const problem = databaseNotReached(error);
    expect([problem.status, problem.headers]).toEqual([503, { "retry-after": "1" }]);
    expect(problem.message).toMatch(/nothing was stored\. Retry it\.$/);
  });

  // pg's own connection errors have no code: their messages say whether anything was sent.
  it.each([
    ["Connection terminated unexpectedly", /may or may not have been recorded/],
    ["Connection terminated", /may or may not have been recorded/],
    ["Connection terminated due to connection timeout", /nothing was stored/],
    ["Client has encountered a connection error and is not queryable", /nothing was stored/],
    ["Client was closed and is not queryable", /nothing was stored/],
  ])("pg's %s", (message, detail) => {
    const problem = databaseUnavailable(new Error(message));
    expect(problem?.status).toBe(503);
    expect(problem?.message).toMatch(detail);
  });

  it.each(["22003", "23505", "P0001", "", "42P01"])("%s: not the database being unavailable", (code) => {
    expect(databaseUnavailable(withCode(code))).toBeNull();
  });

  it("ignores values without a string code", () => {
    expect(databaseUnavailable(new Error("x"))).toBeNull();
    expect(databaseUnavailable(Object.assign(new Error("Connection terminated unexpectedly"), { code: "23505" }))).toBeNull();
    expect(databaseUnavailable(null)).toBeNull();
    expect(databaseUnavailable({ code: 57014 })).toBeNull();
  });
});

// Console and admin routes reach the database through Prisma, which wraps pg's errors. These are
// the errors Prisma really throws, against a port nobody listens on and a real lock wait.
describe("prismaDatabaseUnavailable", () => {
  const clientOn = (connectionString: string, options: Partial<pg.PoolConfig> = {}) =>
    new PrismaClient({ adapter: new PrismaPg(new pg.Pool({ connectionString, max: 1, ...options })) });
  const caught = async (work: () => Promise<unknown>): Promise<unknown> => work().then(() => expect.fail("expected an error"), (error: unknown) => error);

  it("a database that refuses connections: P1001 from a model query, P2010 from a raw one; nothing stored", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const client = clientOn(`postgresql://postgres@127.0.0.1:${port}/nowhere`);
    try {
      for (const error of [await caught(() => client.tenant.findMany()), await caught(() => client.$queryRawUnsafe("SELECT 1"))]) {
        const problem = prismaDatabaseUnavailable(error);
        expect(problem?.status).toBe(503);
        expect(problem?.headers).toEqual({ "retry-after": "1" });
        expect(problem?.message).toBe("The database could not serve this request (the database's server could not be reached); nothing was stored. Retry it.");
        expect(problem?.cause).toEqual({ code: "DatabaseNotReachable", message: expect.stringContaining(`127.0.0.1:${port}`) });
      }
    } finally {
      await client.$disconnect();
    }
  });

  it("a lock wait past lock_timeout: the SQLSTATE under Prisma's P2010, nothing stored", async () => {
    const url = inject("serverUrl");
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    const client = clientOn(url, { options: "-c lock_timeout=100" });
    try {
      await holder.query("SELECT pg_advisory_lock(7243901)");
      const error = await caught(() => client.$queryRawUnsafe("SELECT pg_advisory_lock(7243901)::text"));
      expect((error as { code?: string }).code).toBe("P2010");
      const problem = prismaDatabaseUnavailable(error);
      expect(problem?.message).toMatch(/stayed locked longer than the lock timeout\); nothing was stored/);
      expect(problem?.cause).toEqual({ code: "55P03", message: "canceling statement due to lock timeout" });
    } finally {
      await holder.end();
      await client.$disconnect();
    }
  });

  it("pg's code-less error passed through Prisma: in doubt, read before repeating a change", () => {
    const error = Object.assign(new Error("Connection terminated unexpectedly"), { clientVersion: "7" });
    expect(prismaDatabaseUnavailable(error)?.message).toBe(
      "The database could not confirm this request (the connection to the database closed); it may or may not have been recorded. " +
        "Read what is stored before repeating a change (a read is always safe to repeat).",
    );
  });

  it.each([
    ["P1017", /may or may not have been recorded/],
    ["P2037", /no connection slot free\); nothing was stored/],
    ["P2034", /nothing was stored/],
    // A socket error the adapter does not map keeps its own code under Prisma.
    ["EHOSTUNREACH", /the database's host is unreachable\); nothing was stored/],
  ])("Prisma's %s", (code, detail) => {
    expect(prismaDatabaseUnavailable(Object.assign(new Error("x"), { code, clientVersion: "7" }))?.message).toMatch(detail);
  });

  // A $transaction's BEGIN or COMMIT: the adapter's error reaches the route as it is, without Prisma's wrapping.
  it("the adapter's DriverAdapterError as it is: a connection reset at COMMIT is in doubt, a serialization failure stored nothing", () => {
    const adapterError = (cause: Record<string, unknown>) => Object.assign(new Error(String(cause.kind)), { name: "DriverAdapterError", cause });
    expect(prismaDatabaseUnavailable(adapterError({ kind: "ConnectionClosed" }))?.message).toMatch(/connection to the database was reset\); it may or may not have been recorded/);
    const conflict = prismaDatabaseUnavailable(adapterError({ kind: "TransactionWriteConflict", originalCode: "40001", originalMessage: "could not serialize access" }));
    expect(conflict?.message).toMatch(/nothing was stored/);
    expect(conflict?.cause).toEqual({ code: "40001", message: "could not serialize access" });
    expect(prismaDatabaseUnavailable(adapterError({ kind: "UniqueConstraintViolation", originalCode: "23505", originalMessage: "duplicate" }))).toBeNull();
  });

  it("pg's own code-less connection errors, however they arrive; 08P01 (a statement sent with the wrong parameters) is a bug, not an outage", () => {
    expect(prismaDatabaseUnavailable(new Error("Connection terminated unexpectedly"))?.message).toMatch(/may or may not have been recorded/);
    expect(prismaDatabaseUnavailable(new Error("timeout exceeded when trying to connect"))?.message).toMatch(/nothing was stored/);
    expect(prismaDatabaseUnavailable(Object.assign(new Error("x"), { code: "08P01", clientVersion: "7" }))).toBeNull();
    expect(databaseUnavailable(withCode("08P01"))).toBeNull();
  });

  it("leaves alone what is not the database being unavailable, and errors that did not come through Prisma", async () => {
    expect(prismaDatabaseUnavailable(Object.assign(new Error("x"), { code: "P2002", clientVersion: "7" }))).toBeNull();
    expect(prismaDatabaseUnavailable(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }))).toBeNull();
    expect(prismaDatabaseUnavailable(Object.assign(new Error("connect ETIMEDOUT"), { code: "ETIMEDOUT" }))).toBeNull();
    expect(prismaDatabaseUnavailable(new ProblemError("not-found", "x"))).toBeNull();
    const client = clientOn(inject("serverUrl"));
    try {
      expect(prismaDatabaseUnavailable(await caught(() => client.$queryRawUnsafe("SELECT 1/0")))).toBeNull();
    } finally {
      await client.$disconnect();
    }
  });
});
