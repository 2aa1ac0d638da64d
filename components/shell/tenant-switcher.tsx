"use client";

import { usePathname, useRouter } from "next/navigation";

// Switches tenant and stays on the same section (/t/<tenant>/<section>…).
export function TenantSwitcher({ current, tenants }: { current: string; tenants: { slug: string; name: string }[] }) {
  const router = useRouter();
  const pathname = usePathname();
  const section = pathname.split("/")[3] ?? "";
  return (
    <label className="tenant-switcher">
      <span className="tenant-switcher-label">Tenant</span>
      <select
        value={current}
        onChange={(e) => router.push(`/t/${e.target.value}${section ? `/${section}` : ""}`)}
        aria-label="Switch tenant"
      >
        {tenants.map((t) => (
          <option key={t.slug} value={t.slug}>
            {t.name === t.slug ? t.slug : `${t.name} (${t.slug})`}
          </option>
        ))}
      </select>
    </label>
  );
}
