import { visibleJson } from "@/lib/console/visible-characters";

// Arguments and results as collapsible, pretty-printed JSON. Server-rendered <details>: no JS needed.
// Invisible and direction-changing characters show as \uXXXX: the reader sees every character.
export function JsonView({ label, value, open = false }: { label: string; value: unknown; open?: boolean }) {
  const size = value === null || value === undefined ? 0 : JSON.stringify(value).length;
  return (
    <details className="json" open={open}>
      <summary>
        {label} <span className="muted">({value === null || value === undefined ? "none" : `${size} bytes`})</span>
      </summary>
      <pre className="json">{visibleJson(value, 2)}</pre>
    </details>
  );
}
