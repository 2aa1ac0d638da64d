/** Like Promise.race with a sleep, but clears the timer so it can't keep the process alive afterwards. */
export async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | "timeout"> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<"timeout">((resolve) => (timer = setTimeout(resolve, ms, "timeout")))]);
  } finally {
    clearTimeout(timer);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
