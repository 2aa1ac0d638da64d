import net from "node:net";
import { HOST } from "./settings";

/** Last port if still free (stable URL across restarts), else an OS-assigned one. */
export async function choosePort(preferred: number | undefined): Promise<number> {
  if (preferred !== undefined && Number.isInteger(preferred) && preferred > 0 && preferred < 65536) {
    const p = await probePort(preferred);
    if (p !== null) return p;
  }
  const p = await probePort(0);
  if (p === null) throw new Error("embedded postgres: could not find a free port");
  return p;
}

/** The port actually bound (`port` 0 = any), or null if it is taken. */
function probePort(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once("error", () => resolve(null));
    srv.listen({ host: HOST, port, exclusive: true }, () => {
      const addr = srv.address();
      const bound = typeof addr === "object" && addr !== null ? addr.port : null;
      srv.close(() => resolve(bound));
    });
  });
}
