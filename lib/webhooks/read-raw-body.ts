import { assertJsonMediaType, readBody } from "@/lib/http/read-body";

export { MiB } from "@/lib/http/read-body";

// The body exactly as sent (signatures are over these bytes), refused past `maxBytes` as it
// streams in. JSON media types only.
export async function readRawBody(req: Request, maxBytes: number): Promise<Buffer> {
  assertJsonMediaType(req);
  return readBody(req, maxBytes);
}
