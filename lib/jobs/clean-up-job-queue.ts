import { makeWorkerUtils } from "graphile-worker";
import { quietLogger } from "@/lib/jobs/job-queue-schema";

// Removes jobs that failed for good from the job queue. A delivery whose job is removed this way
// is still pending in event_delivery, and the recovery sweep enqueues it again. (Not
// GC_TASK_IDENTIFIERS: running workers cache task ids, so it is unsafe while they run.)
export async function cleanUpJobQueue(databaseUrl: string): Promise<void> {
  const utils = await makeWorkerUtils({ connectionString: databaseUrl, logger: quietLogger() });
  try {
    await utils.cleanup({ tasks: ["DELETE_PERMAFAILED_JOBS"] });
  } finally {
    await utils.release();
  }
}
