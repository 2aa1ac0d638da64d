// The request header proxy.ts gives every console page: its own path and query, where sign-in
// brings a visitor back to (a server component is not told its URL).
export const CONSOLE_PATH_HEADER = "x-tollgate-console-path";
