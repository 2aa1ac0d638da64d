import type { Db } from "@/lib/db";
import { log } from "@/lib/log";
import { listOperations, type OperationRow } from "@/lib/console/list-operations";
import { operationsFirstPage, type OperationsQuery } from "@/lib/console/operations-query";

// The CSV columns, in order: a header name and how to read it from a row.
const columns: [string, (row: OperationRow) => string | number | null][] = [
  ["id", (r) => r.id],
  ["created_at", (r) => r.createdAt.toISOString()],
  ["updated_at", (r) => r.updatedAt.toISOString()],
  ["completed_at", (r) => r.completedAt?.toISOString() ?? null],
  ["tool", (r) => r.tool],
  ["principal", (r) => r.principal],
  ["state", (r) => r.state],
  ["attempts", (r) => r.attemptCount],
  ["max_attempts", (r) => r.maxAttempts],
  ["conflicts", (r) => r.conflictCount],
  ["mismatches", (r) => r.mismatchCount],
  ["replays", (r) => r.replayCount],
  ["resource_id", (r) => r.resourceId],
  ["workflow_id", (r) => r.workflowId],
  ["trace_id", (r) => r.traceId],
  ["key_digest", (r) => r.keyDigest],
  ["downstream_key", (r) => r.downstreamKey],
  ["error_code", (r) => r.errorCode],
];

// Every operation matching the view's filters, in the view's order, as CSV (RFC 4180, CRLF).
// A pull stream: each read fetches the next keyset batch, so memory holds one batch however
// many rows there are, and a client that stops reading stops the queries. Batches are separate
// statements, not one snapshot: a row that changes meanwhile (sorted by "updated") may move
// past the cursor; sorted by "created" (the default) every row appears exactly once.
export function exportOperationsCsv(options: { db: Db; tenantId: string; query: OperationsQuery; batchSize?: number }): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const batchSize = options.batchSize ?? 1000;
  const query: OperationsQuery = { ...options.query, ...operationsFirstPage };
  let cursor: string | null = null;
  let rows = 0;
  let started = false;
  const startedAt = performance.now();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!started) {
          started = true;
          controller.enqueue(encoder.encode(`${columns.map(([name]) => name).join(",")}\r\n`));
          return;
        }
        const page = await listOperations({ db: options.db, tenantId: options.tenantId, query: { ...query, after: cursor }, limit: batchSize, count: false });
        if (page.rows.length > 0) {
          rows += page.rows.length;
          controller.enqueue(encoder.encode(page.rows.map((row) => `${columns.map(([, read]) => csvCell(read(row))).join(",")}\r\n`).join("")));
        }
        cursor = page.nextCursor;
        if (!cursor) {
          log().info({ tenantId: options.tenantId, rows, ms: Math.round(performance.now() - startedAt) }, "operations export finished");
          controller.close();
        }
      },
      cancel() {
        log().info({ tenantId: options.tenantId, rows }, "operations export cancelled by the client");
      },
    },
    { highWaterMark: 1 },
  );
}

// Quotes a cell when it holds a comma, quote or line break (quotes doubled). Text that a
// spreadsheet would run as a formula (= + - @ tab CR at the start) gets a leading apostrophe:
// tool names, principals and resource ids come from agents and are not trusted.
export function csvCell(value: string | number | null): string {
  if (value === null) return "";
  let text = String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
