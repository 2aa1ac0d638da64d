"use client";

import { useId, type ReactNode } from "react";

type FieldProps = { id: string; "aria-invalid"?: true; "aria-describedby"?: string };

// A labelled control with its hint and its server error, tied together for screen readers.
export function Field({ path, label, hint, error, children }: { path: string; label: string; hint?: string; error?: string; children: (props: FieldProps) => ReactNode }) {
  const id = useId();
  const described = [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(" ");
  return (
    <div className="field" data-path={path}>
      <label htmlFor={id}>{label}</label>
      {children({ id, ...(error ? { "aria-invalid": true } : {}), ...(described ? { "aria-describedby": described } : {}) })}
      {hint ? (
        <span id={`${id}-hint`} className="muted small">
          {hint}
        </span>
      ) : null}
      {error ? (
        <span id={`${id}-error`} className="field-error">
          {error}
        </span>
      ) : null}
    </div>
  );
}
