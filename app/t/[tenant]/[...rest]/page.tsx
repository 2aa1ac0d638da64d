import { notFound } from "next/navigation";
import { requireConsole } from "@/lib/auth/require-console";

export const dynamic = "force-dynamic";

// GET /t/{tenant}/<anything no page answers> – the console's own "not found" (../not-found.tsx),
// inside the tenant's navigation, for members; others get the root one, as for the tenant itself.
export default async function UnknownConsolePage({ params }: { params: Promise<{ tenant: string }> }) {
  await requireConsole((await params).tenant);
  notFound();
}
