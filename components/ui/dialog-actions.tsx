// The footer of every console form dialog: whom the change is audited as (where shown), Cancel,
// and the submit button with its in-flight label. Cancel is disabled while the request is in
// flight: closing would not stop a change the server may still apply, only hide its answer.
export function DialogActions(props: {
  label: string;
  busyLabel: string;
  busy: boolean;
  onCancel: () => void;
  auditedAs?: string;
  danger?: boolean;
}) {
  return (
    <div className="row dialog-actions">
      {props.auditedAs ? <span className="muted">Audited as {props.auditedAs}</span> : null}
      <button type="button" onClick={props.onCancel} disabled={props.busy}>
        Cancel
      </button>
      <button type="submit" className={props.danger ? "primary danger-fill" : "primary"} disabled={props.busy}>
        {props.busy ? props.busyLabel : props.label}
      </button>
    </div>
  );
}
