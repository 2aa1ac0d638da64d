import { headers } from "next/headers";
import { notFound, redirect } from "next/navigation";
import { CONSOLE_PATH_HEADER } from "@/lib/auth/console-path";
import { currentConsoleUser, type ConsoleUser } from "@/lib/auth/console-user";
import { can, type Capability } from "@/lib/auth/roles";

// For console pages (server components): the signed-in user and the tenant of the URL, or a
// redirect to sign in that comes back to this page (a link from a pager or a chat), or a 404 when
// the user is not a member (another tenant does not exist).
export async function requireConsole(tenantSlug: string, capability: Capability = "read") {
  const user = await currentConsoleUser();
  if (!user) {
    // The sign-in form checks it stays on this console (lib/console/safe-callback-url.ts).
    const here = (await headers()).get(CONSOLE_PATH_HEADER);
    redirect(here ? `/signin?callbackUrl=${encodeURIComponent(here)}` : "/signin");
  }
  const tenant = user.tenants.find((t) => t.slug === tenantSlug);
  if (!tenant) notFound();
  if (!can(user.role, capability)) notFound();
  return { user, tenant } satisfies { user: ConsoleUser; tenant: ConsoleUser["tenants"][number] };
}
