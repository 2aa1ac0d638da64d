import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  poweredByHeader: false,
  // Tests build each source version into its own folder (see test/support/global-setup.ts),
  // so a rebuild never pulls files from under a server that is still running.
  distDir: process.env.NEXT_DIST_DIR || ".next",
  // pino, pg and prom-client are Node-only; keep them out of the server bundle.
  // Parallel development runs may skip the build's type check (TOLLGATE_SKIP_TYPECHECK=1) and run
  // `npm run check` themselves; CI never sets it, so the suite's build still type-checks everything.
  typescript: { ignoreBuildErrors: process.env.TOLLGATE_SKIP_TYPECHECK === "1" },
  serverExternalPackages: ["pino", "pg", "@prisma/adapter-pg", "prom-client"],
};

export default nextConfig;
