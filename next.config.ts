import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // The API must never be cached or prerendered: every answer depends on the database.
  poweredByHeader: false,
  // pino and the pg driver are Node-only; keep them out of the server bundle.
  serverExternalPackages: ["pino", "pg", "@prisma/adapter-pg", "prom-client"],
  typescript: { ignoreBuildErrors: false },
};

export default nextConfig;
