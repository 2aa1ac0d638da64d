import type { Metadata } from "next";
import type { ReactNode } from "react";
import "./globals.css";

export const metadata: Metadata = {
  // Each page names itself ("Reconcile · Tollgate"): tabs and history tell the pages apart.
  title: { template: "%s · Tollgate", default: "Tollgate" },
  description: "Makes AI-agent tool calls safe to retry",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
