export function isErrno(err: unknown, code: string): boolean {
  return typeof err === "object" && err !== null && (err as NodeJS.ErrnoException).code === code;
}

export function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
