import pino, { type Logger } from "pino";
import { logLevel } from "@/lib/env";

// JSON lines on stdout. Raw API keys, Idempotency-Keys and secrets are never passed to
// the logger (callers log logDigest() instead); the redaction below is a second net for
// header objects that might slip in.
const globalForLog = globalThis as unknown as { tollgateLog?: Logger };

export function log(): Logger {
  if (!globalForLog.tollgateLog) {
    globalForLog.tollgateLog = pino({
      level: logLevel(),
      base: { service: "tollgate" },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ["authorization", "headers.authorization", "idempotencyKey", "headers['idempotency-key']", "secret", "*.secret"],
        censor: "[redacted]",
      },
    });
  }
  return globalForLog.tollgateLog;
}
