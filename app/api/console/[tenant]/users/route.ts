import { randomBytes } from "node:crypto";
import { z } from "zod";
import { db } from "@/lib/db";
import { KiB, readJson } from "@/lib/http/read-json";
import { json } from "@/lib/http/respond";
import { withConsoleUser } from "@/lib/http/with-console-user";
import { createUser, userInputSchema } from "@/lib/users/create-user";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// A console-made user belongs to this tenant only; all-tenants admins are made with the CLI.
const createSchema = userInputSchema.pick({ email: true, name: true, role: true, password: true }).extend({ password: userInputSchema.shape.password.or(z.literal("")) }).strict();

// POST /api/console/{tenant}/users – an admin adds a person to this tenant; a generated password is returned once
export const POST = withConsoleUser<{ tenant: string }>({ route: "/api/console/{tenant}/users", capability: "administer" }, async ({ req, user, tenant }) => {
  const input = createSchema.parse(await readJson(req, { maxBytes: 16 * KiB }));
  const generated = input.password ? null : randomBytes(15).toString("base64url");
  const created = await createUser({
    db: db(),
    actor: `user:${user.email}`,
    admin: { id: user.id, tenantId: tenant.id },
    input: { email: input.email, name: input.name, role: input.role, tenants: [tenant.slug], password: input.password || (generated ?? undefined) },
  });
  return json({ user: { id: created.id, email: created.email, role: created.role }, generatedPassword: generated }, 201, { "cache-control": "no-store" });
});

export const { GET, PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/console/{tenant}/users", ["POST"]);
