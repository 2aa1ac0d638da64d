import { describe, expect, it } from "vitest";
import { shouldSeedDemo } from "@/lib/cli/demo-seed-policy";

describe("shouldSeedDemo: whether npm start seeds the demo tenant into an empty database", () => {
  it("unset (or blank): on the embedded database only", () => {
    expect(shouldSeedDemo({ embedded: true, setting: undefined })).toBe(true);
    expect(shouldSeedDemo({ embedded: false, setting: undefined })).toBe(false);
    expect(shouldSeedDemo({ embedded: false, setting: " " })).toBe(false);
  });

  it("1 seeds on any database, 0 on none", () => {
    for (const embedded of [true, false]) {
      expect(shouldSeedDemo({ embedded, setting: "1" })).toBe(true);
      expect(shouldSeedDemo({ embedded, setting: "0" })).toBe(false);
    }
  });

  it("anything else is refused with the accepted values, not taken as yes or no", () => {
    for (const setting of ["yes", "true", "false", "2"]) {
      expect(() => shouldSeedDemo({ embedded: true, setting })).toThrow(`TOLLGATE_DEMO must be 1 (seed the demo tenant into an empty database) or 0 (never), not "${setting}"`);
    }
  });
});
