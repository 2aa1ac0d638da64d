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
  // `next dev` printed every request's URL with its query string, a looked-up Idempotency-Key or
  // a console search for one included; Tollgate's own request log (pino) names routes, not URLs.
  logging: { incomingRequests: false },
  // The console's pages may not be framed: a page of the same site (another port, a sibling
  // subdomain) could otherwise show a signed-in console in a frame and steer clicks on Revoke or
  // Resolve (security review). The API answers JSON, which no one frames; it is left out so the
  // hot path carries no extra headers.
  async headers() {
    const noFraming = [
      { key: "Content-Security-Policy", value: "frame-ancestors 'none'" },
      { key: "X-Frame-Options", value: "DENY" },
      { key: "X-Content-Type-Options", value: "nosniff" },
      { key: "Referrer-Policy", value: "same-origin" },
    ];
    // next-auth's own pages too (its sign-out confirmation is a button that could be clickjacked).
    return [
      { source: "/:path((?!api/).*)", headers: noFraming },
      { source: "/api/auth/:path*", headers: noFraming },
    ];
  },
};

export default nextConfig;
