import { cache } from "react";
import { getServerSession } from "next-auth";
import { db } from "@/lib/db";
import { authOptions } from "@/lib/auth/auth-options";
import { sessionEndsAt } from "@/lib/auth/ended-sessions";
import { env } from "@/lib/env";
import type { UserRole } from "@/lib/auth/roles";

export type ConsoleUser = {
  id: string;
  email: string;
  name: string;
  role: UserRole;
  // The tenants this user may see, by slug, in a stable order.
  tenants: { id: string; slug: string; name: string }[];
};

// The signed-in person, read fresh from the database on every request (role, memberships,
// disabled), or null. Callers decide whether that means a redirect or a 401. cache() makes
// the layout and the page of one render share a single lookup.
export const currentConsoleUser = cache(readConsoleUser);

async function readConsoleUser(): Promise<ConsoleUser | null> {
  const session = (await getServerSession(authOptions())) as { uid?: string; gen?: number; sid?: string; sat?: number } | null;
  if (!session?.uid) return null;
  // Over TOLLGATE_SESSION_HOURS since its sign-in, however often next-auth rolled it forward. A
  // session from before sign-in times were kept has none, so it could neither end nor be signed
  // out of for good: its person signs in again, once.
  const ends = sessionEndsAt(session.sat, env().TOLLGATE_SESSION_HOURS);
  if (!ends || ends.getTime() <= Date.now()) return null;
  const user = await db().user.findUnique({
    where: { id: session.uid },
    include: {
      tenants: { include: { tenant: true } },
      // Signed out of (lib/auth/ended-sessions.ts). Sessions from before session ids carry none.
      endedSessions: session.sid ? { where: { sid: session.sid }, select: { sid: true } } : false,
    },
  });
  if (!user || user.disabledAt) return null;
  if (user.endedSessions?.length) return null;
  // Signed in before the user was last disabled (tokens from before this rule carry none: 0).
  if ((session.gen ?? 0) !== user.sessionGeneration) return null;
  const tenants = user.allTenants
    ? await db().tenant.findMany({ orderBy: { slug: "asc" } })
    : user.tenants.map((m) => m.tenant).sort((a, b) => a.slug.localeCompare(b.slug));
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    role: user.role,
    tenants: tenants.map((t) => ({ id: t.id, slug: t.slug, name: t.name })),
  };
}
