import { z } from "zod";

// z.record for a JSON object whose keys are names (headers, event types). Zod's record skips a
// "__proto__" key without checking it, so `{"__proto__": …}` was accepted and silently dropped;
// a name that cannot be kept is refused instead, like any other invalid name.
export function jsonRecord<K extends z.core.$ZodRecordKey, V extends z.ZodType>(key: K, value: V) {
  return z.preprocess((input, ctx) => {
    if (input !== null && typeof input === "object" && Object.hasOwn(input, "__proto__")) {
      ctx.addIssue({ code: "custom", path: ["__proto__"], message: '"__proto__" cannot be used as a name here', input });
      return z.NEVER;
    }
    return input;
  }, z.record(key, value));
}
