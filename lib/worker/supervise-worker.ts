import { startWorker, type RunningWorker } from "@/lib/worker/run-worker";
import type { WorkerSettings } from "@/lib/worker/worker-settings";
import type { WorkerLog } from "@/lib/worker/worker-tasks";

// `npm start` keeps its in-process worker running: a worker that stops on its own (PostgreSQL
// restarted and its liveness connection died, a fatal queue error) is started again after a
// pause that doubles up to a minute. `npm run worker` does not do this: it exits non-zero and
// leaves restarting to the process supervisor.
export function superviseWorker(options: { databaseUrl: string; serverSecret: string; settings?: Partial<WorkerSettings>; log: WorkerLog }): { stop: () => Promise<void> } {
  let current: RunningWorker | undefined;
  let stopped = false;
  let pause = 1000;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const launch = async (): Promise<void> => {
    if (stopped) return;
    try {
      current = await startWorker(options);
      if (stopped) {
        await current.stop();
        return;
      }
      pause = 1000;
      await current.done.catch(() => undefined);
    } catch (error) {
      options.log("error", "worker could not start", { err: error instanceof Error ? error.message : String(error) });
    }
    if (stopped) return;
    options.log("warn", "worker stopped on its own; starting it again", { inMs: pause });
    timer = setTimeout(() => {
      running = launch();
    }, pause);
    pause = Math.min(pause * 2, 60_000);
  };
  running = launch();
  return {
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current?.stop();
      await running;
    },
  };
}
