import NextAuth from "next-auth";
import { authOptions } from "@/lib/auth/auth-options";
import { otherMethods } from "@/lib/http/method-not-allowed";
import { unreadableAuthBody } from "@/lib/auth/unreadable-auth-body";

export const dynamic = "force-dynamic";

// GET/POST /api/auth/* – next-auth's sign-in, callback, session, CSRF and sign-out endpoints
async function handler(req: Request, ctx: { params: Promise<{ nextauth: string[] }> }) {
  return (await unreadableAuthBody(req)) ?? NextAuth(authOptions())(req, ctx);
}

export { handler as GET, handler as POST };
// The rest as every API route answers them (Next.js alone gave an empty 405 without Allow).
export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/auth/*", ["GET", "POST"]);
