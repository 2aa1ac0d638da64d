import type { LoggerInstance } from "next-auth";
import { log } from "@/lib/log";

// next-auth's own logger wrote multi-line console text beside the server's JSON lines: a stack
// trace for every request carrying a junk session cookie (no sign-in needed, so anyone could
// flood the log), and an SSO callback's `?error=` as given, newlines and terminal escapes
// included, so a caller could forge log lines. Its errors become one JSON line each, with
// next-auth's code and the error's class only: their messages may hold what the caller sent.
export const nextAuthLogger: LoggerInstance = {
  error(code, metadata) {
    const error = metadata instanceof Error ? metadata : metadata?.error;
    log().warn({ nextAuth: code, err: { name: error instanceof Error ? error.name : typeof error } }, "next-auth refused a request");
  },
  warn(code) {
    log().warn({ nextAuth: code }, "next-auth warning");
  },
  // Its debug output includes request bodies (a sign-in's password among them).
  debug() {},
};
