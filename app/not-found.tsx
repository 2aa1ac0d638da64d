import Link from "next/link";

// Any URL nothing answers, and a tenant the signed-in person is not a member of (which, for
// them, does not exist): Next.js's bare "404" page said neither where one was nor where to go.
export default function NotFound() {
  return (
    <main className="landing">
      {/* React hoists it into <head>; a not-found file's metadata export is not applied. */}
      <title>Not found · Tollgate</title>
      <h1>Page not found</h1>
      <p>Nothing is here, or it belongs to a tenant you are not a member of.</p>
      <p>
        <Link href="/">Go to your console</Link>
      </p>
    </main>
  );
}
