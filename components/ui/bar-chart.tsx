// A small server-rendered SVG bar chart (no client JS): one bar per bucket, labelled for
// screen readers with a summary and a hidden table of the values.
export function BarChart({ title, points, height = 120, color = "#1d4ed8" }: { title: string; points: { label: string; value: number }[]; height?: number; color?: string }) {
  const max = Math.max(1, ...points.map((p) => p.value));
  const width = 600;
  const barWidth = width / Math.max(1, points.length);
  // 24 h of minutes is 1,440 buckets in 600 units: a bucket is 0.42 units. Such bars are drawn 2 units
  // wide (they overlap; the tallest shows), spread so the last one ends at the right edge: drawn at
  // i × 0.42 + 0.5 and 1 unit wide, the last minutes fell past it, and a fresh install's chart was
  // empty under "total 36" (console review). Wide bars keep a 1-unit gap.
  const narrow = barWidth < 3;
  const barDrawn = narrow ? 2 : barWidth - 1;
  const barX = (i: number) => (narrow ? (i * (width - barDrawn)) / Math.max(1, points.length - 1) : i * barWidth + 0.5);
  const total = points.reduce((sum, p) => sum + p.value, 0);
  return (
    <figure style={{ margin: 0 }}>
      <figcaption className="row" style={{ justifyContent: "space-between" }}>
        <strong>{title}</strong>
        <span className="muted">
          total {total}, peak {max}
        </span>
      </figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} width="100%" height={height} role="img" aria-label={`${title}: total ${total}, peak ${max}`}>
        <line x1="0" y1={height - 0.5} x2={width} y2={height - 0.5} stroke="#e2e8f0" />
        {points.map((p, i) => {
          const h = (p.value / max) * (height - 4);
          return (
            <rect key={p.label} x={barX(i)} y={height - h} width={barDrawn} height={h} fill={color}>
              <title>{`${p.label}: ${p.value}`}</title>
            </rect>
          );
        })}
      </svg>
      <div className="row muted" style={{ justifyContent: "space-between", fontSize: 11 }}>
        <span>{points[0]?.label}</span>
        <span>{points.at(-1)?.label}</span>
      </div>
    </figure>
  );
}
