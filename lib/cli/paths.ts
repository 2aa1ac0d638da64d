import path from "node:path";

// npm runs scripts from the package root; everything local lives under .tollgate/ (gitignored).
export const projectRoot = process.cwd();
export const localDir = path.join(projectRoot, ".tollgate");
export const migrationsDir = path.join(projectRoot, "prisma", "migrations");
export const schemaPath = path.join(projectRoot, "prisma", "schema.prisma");
