import { describe, expect, it } from "vitest";
import { databaseUnavailable } from "@/lib/db/database-unavailable";

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

  it.each(["57P01", "57P02", "57P04", "ECONNRESET", "EPIPE", "ETIMEDOUT", "08006", "08003"])("%s: in doubt, repeat the same request", (code) => {
    const problem = databaseUnavailable(withCode(code));
    expect(problem?.status).toBe(503);
    expect(problem?.message).toMatch(/may or may not have been recorded\. Repeat the same request/);
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
