import { notFound, redirect } from "next/navigation";
import { currentConsoleUser, type ConsoleUser } from "@/lib/auth/console-user";
import { can, type Capability } from "@/lib/auth/roles";

// For console pages (server components): the signed-in user and the tenant of the URL, or a
// redirect to sign in, or a 404 when the user is not a member (another tenant does not exist).
export async function requireConsole(tenantSlug: string, capability: Capability = "read") {
  const user = await currentConsoleUser();
  if (!user) redirect("/signin");
  const tenant = user.tenants.find((t) => t.slug === tenantSlug);
  if (!tenant) notFound();
  if (!can(user.role, capability)) notFound();
  return { user, tenant } satisfies { user: ConsoleUser; tenant: ConsoleUser["tenants"][number] };
}
