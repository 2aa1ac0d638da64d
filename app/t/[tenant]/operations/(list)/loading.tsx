// Shown while the first page of operations loads: the page's shape (filters, a table of
// placeholder rows), so nothing jumps when the rows arrive.
export default function Loading() {
  return (
    <div aria-busy="true">
      <div className="page-head">
        <div>
          <h1>Operations</h1>
          <p role="status">Loading operations…</p>
        </div>
      </div>
      <div className="skeleton" style={{ height: 26, width: 360 }} />
      <div className="skeleton" style={{ height: 52 }} />
      <div className="table-wrap">
        <table className="data" aria-hidden="true">
          <tbody>
            {Array.from({ length: 12 }, (_, i) => (
              <tr key={i}>
                <td colSpan={11}>
                  <div className="skeleton" style={{ height: 14, margin: "3px 0", width: `${70 + ((i * 37) % 30)}%` }} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
