import { z } from "zod";
import type { Db } from "@/lib/db";
import { newId } from "@/lib/crypto/ids";
import { ProblemError } from "@/lib/http/problem";
import { Prisma } from "@/lib/generated/prisma/client";

export const tenantSlugSchema = z.string().regex(/^[a-z][a-z0-9-]{1,62}$/, "must be 2-63 characters: lowercase letters, digits and dashes, starting with a letter");

export type Tenant = { id: string; slug: string; name: string; createdAt: Date };

// The unique index on slug decides; a duplicate is reported, never overwritten.
export async function createTenant(options: { db: Db; slug: string; name?: string; actor: string }): Promise<Tenant> {
  const slug = tenantSlugSchema.parse(options.slug);
  try {
    return await options.db.$transaction(async (tx) => {
      const tenant = await tx.tenant.create({ data: { id: newId("ten"), slug, name: options.name ?? slug } });
      await tx.auditEvent.create({
        data: { tenantId: tenant.id, actor: options.actor, action: "tenant.created", targetType: "tenant", targetId: tenant.id, after: { slug, name: tenant.name } },
      });
      return tenant;
    });
  } catch (error) {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002") {
      throw new ProblemError("invalid-request", `A tenant with the slug "${slug}" already exists.`);
    }
    throw error;
  }
}

export async function findTenantBySlug(options: { db: Db; slug: string }): Promise<Tenant | null> {
  return options.db.tenant.findUnique({ where: { slug: options.slug } });
}
