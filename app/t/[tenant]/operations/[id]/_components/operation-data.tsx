import type { TraceActor, TraceOperation } from "@/lib/console/operation-trace";
import { JsonView } from "@/components/ui/json-view";

// What the agent asked for and what came of it, as collapsible JSON, plus the latest resolution.
export function OperationData({ op, resolvedBy }: { op: TraceOperation; resolvedBy: TraceActor | null }) {
  const resolution = op.resolution as { outcome?: string; by?: string; via?: string; reason?: string; resourceId?: string | null; evidence?: string | null } | null;
  // A "retry" resolution is history once the next attempt ran; say so rather than look current.
  const current = resolution && (resolution.outcome === op.state || (resolution.outcome === "retry" && op.state === "pending"));
  return (
    <aside className="stack" aria-label="Arguments and result">
      {resolution ? (
        <section className="panel" aria-labelledby="resolution-title">
          <h2 id="resolution-title">{current ? "Resolution" : "Latest resolution"}</h2>
          {current ? null : <p className="muted small">The operation has moved on since; the timeline has the whole story.</p>}
          <dl className="kv">
            <dt>Outcome</dt>
            <dd>{resolution.outcome === "retry" ? "retry allowed" : resolution.outcome}</dd>
            <dt>By</dt>
            <dd>
              <span title={resolution.by}>{resolvedBy?.label ?? resolution.by}</span> <span className="muted">via {resolution.via}</span>
            </dd>
            <dt>Reason</dt>
            <dd>{resolution.reason}</dd>
            {resolution.resourceId ? (
              <>
                <dt>Resource id</dt>
                <dd>
                  <code>{resolution.resourceId}</code>
                </dd>
              </>
            ) : null}
            {resolution.evidence ? (
              <>
                <dt>Evidence</dt>
                <dd className="pre-wrap">{resolution.evidence}</dd>
              </>
            ) : null}
          </dl>
        </section>
      ) : null}
      <section className="panel stack" aria-labelledby="data-title">
        <h2 id="data-title">Data</h2>
        <JsonView label="Arguments" value={op.args} open />
        <JsonView label="Result" value={op.result} open={op.result !== null} />
        {op.error ? <JsonView label="Error" value={op.error} open /> : null}
        <p className="muted small">
          Fingerprint <code>{op.fingerprint.slice(0, 27)}…</code> binds the key to these exact arguments.
        </p>
      </section>
    </aside>
  );
}
