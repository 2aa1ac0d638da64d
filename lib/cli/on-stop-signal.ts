// Runs `stop` on SIGINT and SIGTERM, on every one, not only the first. A terminal's Ctrl-C
// reaches the whole process group, and under `npm start` / `npm run worker` tsx's parent process
// relays the signal once more when the child has not confirmed it within 30 ms (a busy event
// loop): with a once-listener that second signal finds none, and Node's default action ends the
// process on the spot, skipping the shutdown (the embedded PostgreSQL was left running, a
// gateway's calls in flight unrecorded). `stop` is called again on each signal: make it idempotent.
export function onStopSignal(stop: (signal: NodeJS.Signals) => void): void {
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
