/**
 * Label values are only ever identifiers chosen by code (op names, handler ids,
 * event names, outcomes, statuses). This guard keeps that true even if a caller
 * passes something else: anything that does not look like an identifier (an
 * email, a phone number, a token with `=`/`+`/`/`, a long string) becomes `other`,
 * so a value from a payload can never leak into a series or explode cardinality.
 */
const IDENTIFIER = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
const LOOKS_SECRET = /@|\d{6,}|^(?:sk|pk|tok|whsec)_/i;

/** A label value safe to export: an identifier, else `other`. */
export function safeLabel(value: string | null | undefined): string {
  if (!value || !IDENTIFIER.test(value) || LOOKS_SECRET.test(value)) return 'other';
  return value;
}

/** The `status` label of an API attempt: the HTTP status, or the local error code when nothing answered. */
export function statusLabel(status: number, code: string | undefined): string {
  if (status > 0) return String(status);
  return code ? safeLabel(code) : 'none';
}
