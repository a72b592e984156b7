/**
 * Rule vocabulary of `POST /contacts/search` as a discriminated union: each
 * attribute lists its operators; `set`, `not_set` and `never` take no value,
 * every other operator needs one. The value's type per attribute is not given
 * by the spec: ids or names are accepted where either could make sense, and
 * day counts are numbers.
 */

type Valueless<A extends string, O extends string> = { attribute: A; operator: O; value?: undefined };
type Valued<A extends string, O extends string, V> = { attribute: A; operator: O; value: V };

export type SegmentRule =
  | Valued<'lifecycle_stage', 'is' | 'is_not', string | number>
  | Valued<'label', 'has' | 'has_not', string | number>
  | Valued<'language', 'is', string>
  | Valued<'channel', 'has', string | number>
  | Valued<'last_seen', 'within_days' | 'older_than_days', number>
  | Valueless<'last_seen', 'never'>
  | Valued<'created', 'within_days' | 'older_than_days', number>
  | Valued<'name' | 'email' | 'phone', 'contains', string>
  | Valueless<'name' | 'email' | 'phone', 'set' | 'not_set'>;

export type SegmentAttribute = SegmentRule['attribute'];

/** Operators of attribute `A`, as the union above allows them (distributes over the rules). */
type OperatorsOf<A extends SegmentAttribute, R = SegmentRule> = R extends SegmentRule
  ? A extends R['attribute']
    ? R['operator']
    : never
  : never;

/**
 * Operators allowed per attribute (the spec's attribute -> operators table), at
 * runtime: the client's pre-send check and the sandbox's search both read it.
 * `satisfies` ties it to {@link SegmentRule}, so the two cannot drift.
 */
export const SEGMENT_OPERATORS = {
  lifecycle_stage: ['is', 'is_not'],
  label: ['has', 'has_not'],
  language: ['is'],
  channel: ['has'],
  last_seen: ['within_days', 'older_than_days', 'never'],
  created: ['within_days', 'older_than_days'],
  name: ['contains', 'set', 'not_set'],
  email: ['contains', 'set', 'not_set'],
  phone: ['contains', 'set', 'not_set'],
} as const satisfies { readonly [A in SegmentAttribute]: readonly OperatorsOf<A>[] };

/** Operators that take no value. */
export const VALUELESS_OPERATORS: readonly string[] = ['set', 'not_set', 'never'];

/**
 * The operators allowed for `attribute`, or `undefined` when it is not one of
 * the vocabulary's attributes (own keys only: `"constructor"` is unknown too).
 */
export function segmentOperators(attribute: string): readonly string[] | undefined {
  return Object.hasOwn(SEGMENT_OPERATORS, attribute) ? SEGMENT_OPERATORS[attribute as SegmentAttribute] : undefined;
}
