import { z } from "zod";
import type { Db } from "@/lib/db";
import { newId } from "@/lib/crypto/ids";
import { hashPassword } from "@/lib/auth/password";
import { ProblemError } from "@/lib/http/problem";
import { Prisma } from "@/lib/generated/prisma/client";
import { confirmActingAdmin, type ActingAdmin } from "@/lib/users/acting-admin";

export const userInputSchema = z.object({
  // 254: RFC 5321's longest address; a longer one would also overflow the unique index's entry (a 500).
  email: z.email().max(254).transform((e) => e.toLowerCase()),
  name: z.string().max(200).default(""),
  role: z.enum(["viewer", "operator", "approver", "admin"]),
  // Tenant slugs; admins may instead be members of all tenants.
  tenants: z.array(z.string()).default([]),
  allTenants: z.boolean().default(false),
  password: z.string().min(12, "passwords have at least 12 characters").max(200).optional(),
});

export type UserInput = z.input<typeof userInputSchema>;

export type UserSummary = { id: string; email: string; name: string; role: string; allTenants: boolean; tenants: string[]; createdAt: Date; disabledAt: Date | null };

// Creates a console user with memberships in the named tenants; the email is unique. `admin` is
// the console's signed-in admin, read again in the transaction; the CLI and the seed have none.
export async function createUser(options: { db: Db; input: UserInput; actor: string; admin?: ActingAdmin }): Promise<UserSummary> {
  const input = userInputSchema.parse(options.input);
  if (input.allTenants && input.role !== "admin") throw new ProblemError("invalid-request", "Only admins may belong to all tenants.");
  const passwordHash = input.password ? await hashPassword(input.password) : null;
  try {
    return await options.db.$transaction(async (tx) => {
      if (options.admin) await confirmActingAdmin(tx, options.admin);
      const tenants = await tx.tenant.findMany({ where: { slug: { in: input.tenants } }, select: { id: true, slug: true } });
      const missing = input.tenants.filter((slug) => !tenants.some((t) => t.slug === slug));
      if (missing.length) throw new ProblemError("invalid-request", `No tenant with slug ${missing.map((m) => `"${m}"`).join(", ")}.`);
      const user = await tx.user.create({
        data: {
          id: newId("usr"),
          email: input.email,
          name: input.name,
          role: input.role,
          allTenants: input.allTenants,
          passwordHash,
          tenants: { create: tenants.map((t) => ({ tenantId: t.id })) },
        },
      });
      for (const t of tenants) {
        await tx.auditEvent.create({
          data: { tenantId: t.id, actor: options.actor, action: "user.created", targetType: "user", targetId: user.id, after: { email: user.email, role: user.role } },
        });
      }
      return { ...user, tenants: tenants.map((t) => t.slug) };
    });
  } catch (error) {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002") {
      throw new ProblemError("invalid-request", `A user with the email ${input.email} already exists.`);
    }
    throw error;
  }
}
