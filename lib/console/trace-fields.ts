import type { TraceField } from "@/lib/console/operation-trace";

// Helpers every trace source uses to build its entries' fields (type-only import: the sources
// are imported by operation-trace.ts, so nothing here may import it at run time).

// One labelled field, or none when there is nothing to show.
export const field = (label: string, value: string | null | undefined, format?: TraceField["format"]): TraceField[] =>
  value === null || value === undefined || value === "" ? [] : [{ label, value, format }];

// A stored { code, message } error as one line ("code: message"); anything else as its JSON.
export const errorText = (error: unknown): string | null => {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== "object") return null;
  return [e.code, e.message].filter((x) => typeof x === "string" && x).join(": ") || JSON.stringify(e);
};

// The attempt number an audit event's before/after names ({ attempt: 2 }), if any.
export const attemptNumber = (value: unknown): number | undefined => {
  const n = (value as { attempt?: unknown } | null | undefined)?.attempt;
  return typeof n === "number" ? n : undefined;
};
