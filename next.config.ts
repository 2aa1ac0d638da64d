import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  poweredByHeader: false,
  // Tests build each source version into its own folder (see test/support/global-setup.ts),
  // so a rebuild never pulls files from under a server that is still running.
  distDir: process.env.NEXT_DIST_DIR || ".next",
  // pino, pg and prom-client are Node-only; keep them out of the server bundle.
  serverExternalPackages: ["pino", "pg", "@prisma/adapter-pg", "prom-client"],
};

export default nextConfig;
