import { requireConsole } from "@/lib/auth/require-console";

export const dynamic = "force-dynamic";

// GET /t/{tenant} – overview
export default async function OverviewPage({ params }: { params: Promise<{ tenant: string }> }) {
  const { tenant } = await requireConsole((await params).tenant);
  return (
    <div className="page-head">
      <h1>{tenant.name}</h1>
    </div>
  );
}
