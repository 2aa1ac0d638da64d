import { expect } from "vitest";
import { call, type Reply } from "./http";
import type { TenantKeys } from "./test-app";

// Helpers the protocol tests share: a tool per test with its own policy, and the shape
// every problem+json answer must have.

export type Policy = {
  leaseSeconds?: number;
  maxAttempts?: number;
  backoff?: { baseMs: number; capMs: number };
  takeover?: "never" | "deduplicated";
  approval?: "none" | "required";
  approvalTtlSeconds?: number;
  resultRetentionHours?: number;
};

export type ToolSpec = { policy?: Policy; annotations?: Record<string, boolean>; description?: string };

let toolCounter = 0;

// Creates (201) the same tool in each tenant; a fresh name per call unless one is given.
export async function createTool(baseUrl: string, tenants: TenantKeys[], spec: ToolSpec = {}, name = `t.tool-${process.pid}-${++toolCounter}`): Promise<string> {
  for (const tenant of tenants) {
    const res = await call(baseUrl, "PUT", `/api/v1/tools/${name}`, { key: tenant.admin, body: spec });
    expect(res.status, res.text).toBe(201);
  }
  return name;
}

export function expectProblem(res: Reply, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.body).toMatchObject({ status, code });
  expect(typeof res.body.type).toBe("string");
  expect(typeof res.body.title).toBe("string");
  expect(typeof res.body.detail).toBe("string");
}
