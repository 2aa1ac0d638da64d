// ["policy","backoff","baseMs"] → "policy.backoff.baseMs"; ["items",2,"sku"] → "items[2].sku"
export function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, part) => {
    if (typeof part === "number") return `${acc}[${part}]`;
    return acc ? `${acc}.${String(part)}` : String(part);
  }, "");
}
