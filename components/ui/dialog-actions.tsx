// The footer of every console form dialog: whom the change is audited as (where shown), Cancel,
// and the submit button with its in-flight label. `lockCancel` keeps Cancel disabled while the
// request is in flight (dialogs whose close would discard a change the server may still apply).
export function DialogActions(props: {
  label: string;
  busyLabel: string;
  busy: boolean;
  onCancel: () => void;
  auditedAs?: string;
  lockCancel?: boolean;
  danger?: boolean;
}) {
  return (
    <div className="row dialog-actions">
      {props.auditedAs ? <span className="muted">Audited as {props.auditedAs}</span> : null}
      <button type="button" onClick={props.onCancel} disabled={props.lockCancel ? props.busy : undefined}>
        Cancel
      </button>
      <button type="submit" className={props.danger ? "primary danger-fill" : "primary"} disabled={props.busy}>
        {props.busy ? props.busyLabel : props.label}
      </button>
    </div>
  );
}
