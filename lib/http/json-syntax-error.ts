// What JSON.parse's error says, without the part that quotes the body: V8 writes `Unexpected
// token 'w', ..."secrets":[whsec_TOPS"... is not valid JSON`, and a body sent with one quote
// missing would be answered with its own secret (clients and CI jobs log response bodies).
// Only the position, where V8 gives one, and whether the text ended early are kept.
export function describeJsonSyntaxError(error: unknown): string {
  const message = error instanceof Error ? error.message : "";
  const position = /\bat position (\d+)/.exec(message)?.[1];
  if (position !== undefined) return `it breaks at character ${position}`;
  if (/\bend of (JSON )?input\b/i.test(message)) return "it ends before the JSON does";
  return "it is not JSON text";
}
