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

/** Operators allowed per attribute (the table of the spec), for the pre-send check. */
export const SEGMENT_OPERATORS: Readonly<Record<SegmentAttribute, readonly string[]>> = {
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

/** Operators that take no value. */
export const VALUELESS_OPERATORS: readonly string[] = ['set', 'not_set', 'never'];
