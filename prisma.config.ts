import { defineConfig } from "prisma/config";

// Prisma 7 reads its datasource from here, not from schema.prisma. Only `prisma generate`
// uses this file in Tollgate: migrations run through lib/db/migrate.ts (no network needed).
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://localhost/tollgate" },
});
