// Host or network unreachable. On connect nothing was sent; on a connection already open (Linux
// reports an ICMP unreachable kept as the socket's soft error when retransmission gives up) the
// request may have arrived and acted before the route went. Callers tell the two apart by the
// error's `syscall`, each deciding what an error without one means for it: the database's 503
// wording says "nothing stored" (a repeat is answered from what was stored either way), the MCP
// gateway records `unknown` (a retryable failure there would let a retry act twice).
export const UNREACHABLE_CODES: ReadonlySet<string> = new Set(["EHOSTUNREACH", "ENETUNREACH"]);
