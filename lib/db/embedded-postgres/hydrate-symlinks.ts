import { promises as fs } from "node:fs";
import path from "node:path";
import { errMessage, isErrno } from "./errors";

type SymlinkEntry = { source: string; target: string };

/**
 * The package ships shared libs only under their full version
 * (libicuuc.so.60.2, libpq.so.5.18, ...) and a `native/pg-symlinks.json`
 * describing the soname symlinks (libicuuc.so.60 -> libicuuc.so.60.2, ...)
 * that its postinstall script (`scripts/hydrate-symlinks.js`) creates. npm 11
 * did not run that script, so without this `postgres` fails to load
 * (libicui18n.so.60 / libicuuc.so.60 not found) and `initdb` silently picks up
 * the *system* libpq.so.5 instead of the bundled one. Idempotent; same
 * relative links as the postinstall script would create.
 */
export async function hydrateSymlinks(pkgRoot: string, log: (msg: string) => void): Promise<void> {
  let entries: SymlinkEntry[];
  try {
    entries = JSON.parse(await fs.readFile(path.join(pkgRoot, "native", "pg-symlinks.json"), "utf8")) as SymlinkEntry[];
  } catch (err) {
    if (isErrno(err, "ENOENT")) return; // builds without symlinks need nothing
    throw err;
  }
  for (const { source, target } of entries) {
    const targetAbs = path.join(pkgRoot, target);
    const linkValue = path.relative(path.dirname(targetAbs), path.join(pkgRoot, source));
    if ((await fs.readlink(targetAbs).catch(() => null)) === linkValue) continue;
    try {
      await fs.symlink(linkValue, targetAbs);
      log(`embedded postgres: created symlink ${targetAbs} -> ${linkValue}`);
    } catch (err) {
      // EEXIST: a concurrent start created it, or a real file is shipped there.
      // Either way the library resolves; anything else is fatal with a hint.
      if (isErrno(err, "EEXIST")) continue;
      throw new Error(
        `embedded postgres: cannot create ${targetAbs} -> ${linkValue} (${errMessage(err)}). ` +
          `Run \`node scripts/hydrate-symlinks.js\` in ${pkgRoot} as a user that can write there.`,
      );
    }
  }
}
