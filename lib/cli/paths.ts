import path from "node:path";

// npm runs scripts from the package root; everything local lives under .tollgate/ (gitignored).
// TOLLGATE_LOCAL_DIR puts the local state (embedded PostgreSQL, secret key, credentials) in
// another directory instead: tests use it to run CLI processes against a throwaway embedded
// server without touching the developer's own .tollgate/.
export const projectRoot = process.cwd();
export const localDir = process.env.TOLLGATE_LOCAL_DIR ? path.resolve(process.env.TOLLGATE_LOCAL_DIR) : path.join(projectRoot, ".tollgate");
export const migrationsDir = path.join(projectRoot, "prisma", "migrations");
export const schemaPath = path.join(projectRoot, "prisma", "schema.prisma");

// A local file as the start-up messages name it: relative to the project when it is inside it
// (".tollgate/credentials"), absolute otherwise, so the name is right under TOLLGATE_LOCAL_DIR too.
export function shownPath(file: string): string {
  const relative = path.relative(projectRoot, file);
  return relative && !relative.startsWith("..") && !path.isAbsolute(relative) ? relative : file;
}
