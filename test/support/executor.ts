// A tool executor as its own process, so a test can SIGKILL it at the worst moment: after the
// provider took the call, before Tollgate heard the outcome. Configured by EXECUTOR (JSON):
//   { baseUrl, agentKey, tool, idem, args, providerUrl, effect, complete }
// It claims, records the side effect's intent (getting its downstream key), calls the provider
// with that key, records `sent`, and prints `CALLED {…}`; then it either completes or hangs.
type Config = { baseUrl: string; agentKey: string; tool: string; idem: string; args: unknown; providerUrl: string; effect: string; complete: boolean };

const config = JSON.parse(process.env.EXECUTOR ?? "{}") as Config;
const say = (line: string) => process.stdout.write(`${line}\n`);

async function api(method: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${config.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${config.agentKey}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

async function main(): Promise<void> {
  const claimed = await api("POST", "/api/v1/operations", { tool: config.tool, args: config.args }, { "idempotency-key": config.idem });
  if (claimed.status !== 201) {
    say(`CLAIM ${claimed.status} ${JSON.stringify(claimed.body)}`);
    process.exit(3);
  }
  const operationId: string = claimed.body.operationId;
  const fencingToken: string = claimed.body.attempt.fencingToken;
  const effectPath = `/api/v1/operations/${operationId}/side-effects/${config.effect}`;
  const intent = await api("PUT", effectPath, { fencingToken, provider: "fake", state: "intended" });
  if (intent.status !== 200) throw new Error(`intent: ${intent.status} ${JSON.stringify(intent.body)}`);
  const effectKey: string = intent.body.downstreamKey;

  const res = await fetch(`${config.providerUrl}/effects`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ downstreamKey: effectKey, args: config.args }),
  });
  const effect = (await res.json()) as { id: string; duplicate: boolean };
  await api("PUT", effectPath, { fencingToken, provider: "fake", state: "sent", providerResourceId: effect.id });
  say(`CALLED ${JSON.stringify({ operationId, attempt: claimed.body.attempt.number, effectKey, previousState: intent.body.state, effectId: effect.id, duplicate: effect.duplicate })}`);

  if (!config.complete) {
    // The crash window: the effect exists at the provider, Tollgate has not heard the outcome.
    setInterval(() => undefined, 60_000);
    return;
  }
  await api("PUT", effectPath, { fencingToken, provider: "fake", state: "confirmed", providerResourceId: effect.id });
  const done = await api("POST", `/api/v1/operations/${operationId}/complete`, {
    fencingToken,
    outcome: "succeeded",
    result: { statusCode: 201, body: { effect: effect.id }, resourceId: effect.id },
  });
  say(`DONE ${done.status} ${JSON.stringify(done.body)}`);
  process.exit(done.status === 200 ? 0 : 4);
}

main().catch((error: unknown) => {
  say(`ERROR ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
