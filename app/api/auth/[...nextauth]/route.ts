import { authRoute } from "@/lib/auth/auth-route";
import { otherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

// GET/POST /api/auth/* – next-auth's sign-in, callback, session, CSRF and sign-out endpoints
export { authRoute as GET, authRoute as POST };
// The rest as every API route answers them (Next.js alone gave an empty 405 without Allow).
export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("/api/auth/*", ["GET", "POST"]);
