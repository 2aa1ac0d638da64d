import net from "node:net";

// `npm start` waits for /api/health on its port before it says Tollgate is up, and anything
// already listening there (a Tollgate of another checkout, a second `npm start`) answered that
// check: "Tollgate is up" was printed for a server that was not this one, and then its own Next.js
// exited with EADDRINUSE. The port is tried the way Next.js will take it (every address), before
// anything starts; the moment between this check and Next.js's own listen is left to its error.
// Returns what is wrong, or null when the port is free.
export async function portProblem(port: number): Promise<string | null> {
  const server = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ port, exclusive: true }, resolve);
    });
    return null;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "EADDRINUSE") return `port ${port} is in use (another Tollgate, or \`npm start\` running already?): stop it, or start on another port, e.g. PORT=${port + 1} npm start`;
    if (code === "EACCES") return `port ${port} needs privileges this user does not have: choose a port above 1023 with PORT`;
    throw error;
  } finally {
    await new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  }
}
