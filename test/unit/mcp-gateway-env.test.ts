import { afterEach, describe, expect, it } from "vitest";
import { mcpGatewayEnv } from "@/lib/env";

// The gateway's credentials become header values; one with a control character inside made
// fetch's error quote the whole value into the gateway's log. They are refused at start, and the
// refusal names the variable, never its value.

const saved = { ...process.env };
afterEach(() => {
  process.env = { ...saved };
});

function refusal(vars: Record<string, string>): string {
  process.env = { ...saved, TOLLGATE_API_KEY: "tgk_fine", ...vars };
  try {
    mcpGatewayEnv();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("accepted");
}

describe("mcpGatewayEnv", () => {
  it("refuses a key or an upstream authorization with a control character inside, without repeating it", () => {
    const cases: [string, string][] = [
      ["TOLLGATE_API_KEY", "tgk_SECRETvalue\u0001x"],
      ["TOLLGATE_API_KEY", "tgk_SECRETvalue x"],
      ["TOLLGATE_UPSTREAM_AUTHORIZATION", "Bearer SECRETvalue\rx"],
      ["TOLLGATE_UPSTREAM_AUTHORIZATION", " Bearer SECRETvalue"],
    ];
    for (const [name, value] of cases) {
      const message = refusal({ [name]: value });
      expect(message).toContain(name);
      expect(message).not.toContain("SECRET");
    }
  });

  it("refuses a TOLLGATE_URL with a user name or password in it, without repeating them", () => {
    for (const url of ["https://ops:SECRETpass@tollgate.example", "https://SECRETuser@tollgate.example/"]) {
      const message = refusal({ TOLLGATE_URL: url });
      expect(message).toContain("TOLLGATE_URL");
      expect(message).not.toContain("SECRET");
    }
  });

  it("takes a key and an upstream authorization of printable ASCII", () => {
    process.env = { ...saved, TOLLGATE_API_KEY: "tgk_AbC-123_xyz", TOLLGATE_UPSTREAM_AUTHORIZATION: "Bearer up-stream.secret=" };
    expect(mcpGatewayEnv()).toMatchObject({ TOLLGATE_API_KEY: "tgk_AbC-123_xyz", TOLLGATE_UPSTREAM_AUTHORIZATION: "Bearer up-stream.secret=" });
  });
});
