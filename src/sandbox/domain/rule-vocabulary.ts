/**
 * The rule vocabulary of `POST /contacts/search` (spec: the attribute ->
 * operators table). The sandbox keeps its own reading of the table rather
 * than the API client's, so a misreading on either side shows up when one is
 * tested against the other.
 */
export const RULE_OPERATORS: Readonly<Record<string, readonly string[]>> = {
  lifecycle_stage: ['is', 'is_not'],
  label: ['has', 'has_not'],
  language: ['is'],
  channel: ['has'],
  last_seen: ['within_days', 'older_than_days', 'never'],
  created: ['within_days', 'older_than_days'],
  name: ['contains', 'set', 'not_set'],
  email: ['contains', 'set', 'not_set'],
  phone: ['contains', 'set', 'not_set'],
};

/** Spec: `set`, `not_set` and `never` take no value; every other operator needs one. */
export const VALUELESS_OPERATORS: readonly string[] = ['set', 'not_set', 'never'];

/** Operators of an attribute, or undefined when the attribute is not in the table (own keys only). */
export function operatorsOf(attribute: string): readonly string[] | undefined {
  return Object.hasOwn(RULE_OPERATORS, attribute) ? RULE_OPERATORS[attribute] : undefined;
}
