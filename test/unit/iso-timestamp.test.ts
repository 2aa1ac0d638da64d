import { describe, expect, it } from "vitest";
import { iso } from "@/lib/operations/operation-view";

// iso() rewrites PostgreSQL's UTC timestamps as text instead of parsing a Date; whatever path
// it takes, the answer must be exactly what new Date(value).toISOString() gives.
describe("iso", () => {
  const asDate = (value: string) => new Date(value).toISOString();

  it("prints PostgreSQL's UTC output exactly as Date would, for every fraction length", () => {
    const printed = [
      "2026-11-30T03:26:07.769231+00:00",
      "2026-11-30T03:26:07.76923+00:00",
      "2026-11-30T03:26:07.7692+00:00",
      "2026-11-30T03:26:07.769+00:00",
      "2026-11-30T03:26:07.76+00:00",
      "2026-11-30T03:26:07.7+00:00",
      "2026-11-30T03:26:07+00:00",
      "2026-12-31T23:59:59.999999+00:00",
      "2000-02-29T00:00:00.000001+00:00",
      "0999-01-01T00:00:00.5+00:00",
      "0001-01-01T00:00:00+00:00",
    ];
    for (const value of printed) expect(iso(value), value).toBe(asDate(value));
  });

  it("parses anything else (another zone, a space, an ISO string already) the slow way", () => {
    const others = ["2026-11-30T04:26:07.769231+01:00", "2026-11-30 03:26:07.5+00", "2026-11-30T03:26:07.769Z", "2026-11-30T03:26:07.769231-05:30"];
    for (const value of others) expect(iso(value), value).toBe(asDate(value));
  });

  it("keeps null as null", () => {
    expect(iso(null)).toBeNull();
  });

  it("agrees with Date over many random instants", () => {
    for (let i = 0; i < 2000; i++) {
      // Years 1 to 9999, as PostgreSQL prints them in four digits.
      const ms = -62_135_596_800_000 + Math.floor(Math.random() * 315_537_897_600_000);
      const micros = String(Math.floor(Math.random() * 1_000_000)).padStart(6, "0").replace(/0+$/, "");
      const value = `${new Date(ms).toISOString().slice(0, 19)}${micros ? `.${micros}` : ""}+00:00`;
      expect(iso(value), value).toBe(asDate(value));
    }
  });
});
