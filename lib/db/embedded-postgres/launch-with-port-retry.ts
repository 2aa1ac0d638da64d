import type { Binaries } from "./binaries";
import { choosePort } from "./choose-port";
import { launchPostgres, StartFailure, type RunningServer } from "./launch-postgres";
import type { RunAs } from "./run-as-postgres-user";
import { PORT_ATTEMPTS } from "./settings";

/** Launches on the remembered port if it is still free, else on an OS-assigned one. */
export async function launchWithPortRetry(options: {
  bins: Binaries;
  dataDir: string;
  preferredPort: number | undefined;
  runAs: RunAs | null;
  log: (msg: string) => void;
}): Promise<RunningServer> {
  const { bins, dataDir, runAs, log } = options;
  let preferred = options.preferredPort;
  for (let attempt = 1; ; attempt++) {
    const port = await choosePort(preferred);
    try {
      return await launchPostgres({ bins, dataDir, port, runAs, log });
    } catch (err) {
      // Between probing the port and postgres binding it, someone else may
      // have taken it: retry on a fresh OS-assigned port.
      if (!(err instanceof StartFailure && err.portInUse && attempt < PORT_ATTEMPTS)) throw err;
      log(`embedded postgres: port ${port} taken, retrying`);
      preferred = undefined;
    }
  }
}
