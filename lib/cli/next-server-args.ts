import path from "node:path";
import { projectRoot } from "@/lib/cli/paths";

// The arguments node gets for every Tollgate server process (`npm start`, `npm run dev`, the test
// suite's servers, the benchmarks): the front door first (lib/http/front-door.cjs: problem+json
// for what Next.js answers before any route runs), then Next.js's own CLI. Running `next start`
// by hand skips the front door (README, "Decisions where the contract was silent").
export function nextServerArgs(mode: "start" | "dev", port: number, host?: string): string[] {
  return [
    "--require",
    path.join(projectRoot, "lib", "http", "front-door.cjs"),
    path.join(projectRoot, "node_modules", "next", "dist", "bin", "next"),
    mode,
    "-p",
    String(port),
    ...(host ? ["-H", host] : []),
  ];
}
