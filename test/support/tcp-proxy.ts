import { createServer, connect, type Server, type Socket } from "node:net";

// A TCP proxy in front of PostgreSQL, so a test can take "the database" away from a server and
// give it back: `cut()` breaks every open connection (as a crash or a network fault does),
// `down()` also refuses new ones, `up()` accepts them again on the same port; `stall()` keeps
// every connection open but carries nothing more either way (a host that froze, a NAT that forgot
// the connection), until `resume()`.
export type TcpProxy = {
  port: number;
  url: (databaseUrl: string) => string;
  cut(): void;
  down(): Promise<void>;
  up(): Promise<void>;
  stall(): void;
  resume(): void;
  close(): Promise<void>;
};

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
  };
  const listen = (server: Server, port: number) => new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve((server.address() as { port: number }).port));
  });
  let stalled = false;
  const forward = (from: Socket, to: Socket) => from.on("data", (chunk) => void (stalled || to.write(chunk)));
  const newServer = () =>
    createServer((client) => {
      const upstream = connect(target.port, target.host);
      track(client);
      track(upstream);
      forward(client, upstream);
      forward(upstream, client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
  let server: Server | null = newServer();
  const port = await listen(server, 0);
  const cut = () => {
    for (const socket of sockets) socket.destroy();
  };
  const down = async () => {
    const closing = server;
    server = null;
    cut();
    if (closing) await new Promise((resolve) => closing.close(resolve));
  };
  return {
    port,
    url: (databaseUrl) => {
      const u = new URL(databaseUrl);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    cut,
    down,
    up: async () => {
      if (server) return;
      server = newServer();
      await listen(server, port);
    },
    stall: () => void (stalled = true),
    resume: () => void (stalled = false),
    close: down,
  };
}
