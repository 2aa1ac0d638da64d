import type { ReactNode } from "react";
import { notFound } from "next/navigation";
import { db } from "@/lib/db";
import { requireConsole } from "@/lib/auth/require-console";
import { operationExists } from "@/lib/console/operation-exists";

export const dynamic = "force-dynamic";

// Decides "not found" before the page's loading boundary starts streaming, so an unknown
// operation, or another tenant's, answers with a real 404 status and not a 200 page.
export default async function OperationLayout({ children, params }: { children: ReactNode; params: Promise<{ tenant: string; id: string }> }) {
  const { tenant: slug, id } = await params;
  const { tenant } = await requireConsole(slug);
  if (!(await operationExists({ db: db(), tenantId: tenant.id, operationId: id }))) notFound();
  return children;
}
