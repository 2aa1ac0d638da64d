import type { ReactNode } from "react";
import { requireConsole } from "@/lib/auth/require-console";

// Admins only. Checked here, outside this section's loading boundary, so anyone else gets a
// real 404 status (a check that runs after streaming has begun can only render the 404 page).
// The page checks again: this layout does not re-run on every navigation.
export default async function AdminOnlyLayout({ children, params }: { children: ReactNode; params: Promise<{ tenant: string }> }) {
  await requireConsole((await params).tenant, "administer");
  return children;
}
