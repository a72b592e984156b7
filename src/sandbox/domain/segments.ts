import type { AuthInfo } from '../context.js';
import { requirePhonePermission } from '../context.js';
import { invalidMany, type FieldErrors } from '../errors.js';
import type { Contact, SegmentRule, Workspace } from '../types.js';
import { labelIn } from './contacts.js';
import { stageIn } from './lifecycle.js';
import { SEGMENT_OPERATORS, segmentOperators, VALUELESS_OPERATORS } from '../../spec/index.js';

/** A compiled rule: a predicate over a contact. */
export type Predicate = (c: Contact) => boolean;

/**
 * Validates every rule against the vocabulary (spec, POST /contacts/search;
 * the table is src/spec's, the checks are the sandbox's own): an unknown attribute or
 * operator is 422 naming the rule and what is allowed, and so is a value given
 * to `set`, `not_set` or `never` or missing for any other operator. Then compiles the
 * groups: rules in a group are ANDed, groups ORed, no rules matches everyone.
 * Phone rules need the view-phone permission (403).
 */
export function compileMatch(ws: Workspace, auth: AuthInfo, groups: SegmentRule[][], now: number, field = 'match'): Predicate {
  const errors: FieldErrors = {};
  const compiled: Predicate[][] = groups.map((group, g) =>
    group.map((rule, r) => {
      const key = `${field}.${g}.${r}`;
      const ops = segmentOperators(rule.attribute);
      if (!ops) {
        errors[`${key}.attribute`] = [`unknown attribute "${rule.attribute}"; allowed: ${Object.keys(SEGMENT_OPERATORS).join(', ')}`];
        return () => false;
      }
      if (!ops.includes(rule.operator)) {
        errors[`${key}.operator`] = [`operator "${rule.operator}" is not allowed for ${rule.attribute}; allowed: ${ops.join(', ')}`];
        return () => false;
      }
      // Spec: set, not_set and never take no value (absent or null); every other operator needs one.
      if (VALUELESS_OPERATORS.includes(rule.operator)) {
        if (rule.value !== undefined && rule.value !== null) {
          errors[`${key}.value`] = [`operator "${rule.operator}" takes no value; leave value out`];
          return () => false;
        }
      } else if (rule.value === undefined || rule.value === null || rule.value === '') {
        errors[`${key}.value`] = [`operator "${rule.operator}" needs a value`];
        return () => false;
      }
      if (rule.attribute === 'phone') requirePhonePermission(auth, 'A phone rule');
      try {
        return predicate(ws, rule, now, `${key}.value`);
      } catch (err) {
        const e = err as { errors?: FieldErrors };
        Object.assign(errors, e.errors ?? { [`${key}.value`]: ['is not valid'] });
        return () => false;
      }
    }),
  );
  if (Object.keys(errors).length) throw invalidMany(errors);
  if (compiled.length === 0) return () => true;
  return (c) => compiled.some((group) => group.every((p) => p(c)));
}

function days(value: unknown, field: string): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(n) || n < 0) throw invalidMany({ [field]: ['must be a number of days (0 or more)'] });
  return n * 864e5;
}

function text(value: unknown): string {
  return String(value).toLowerCase();
}

function predicate(ws: Workspace, rule: SegmentRule, now: number, field: string): Predicate {
  const { attribute: a, operator: op, value } = rule;
  switch (a) {
    case 'lifecycle_stage': {
      const stage = stageIn(ws, value as string | number, field);
      return op === 'is' ? (c) => c.lifecycleStageId === stage.id : (c) => c.lifecycleStageId !== stage.id;
    }
    case 'label': {
      const label = labelIn(ws, value as string | number, field);
      return op === 'has' ? (c) => c.labelIds.includes(label.id) : (c) => !c.labelIds.includes(label.id);
    }
    case 'language':
      return (c) => c.language?.toLowerCase() === text(value);
    case 'channel': {
      const channel = ws.channels.find((ch) => ch.id === Number(value) || ch.name === value || ch.type === value);
      if (!channel) throw invalidMany({ [field]: [`no channel "${String(value)}" in this workspace`] });
      return (c) => [...ws.conversations.values()].some((cv) => cv.contactId === c.id && cv.channelId === channel.id);
    }
    case 'last_seen':
    case 'created': {
      const at = (c: Contact): number | null => (a === 'created' ? c.createdAt : c.lastSeenAt);
      if (op === 'never') return (c) => at(c) === null;
      const span = days(value, field);
      return op === 'within_days'
        ? (c) => {
            const t = at(c);
            return t !== null && now - t <= span;
          }
        : (c) => {
            const t = at(c);
            return t !== null && now - t > span;
          };
    }
    default: {
      const get = (c: Contact): string | null => (a === 'name' ? c.name : a === 'email' ? c.email : c.phone);
      if (op === 'set') return (c) => (get(c) ?? '') !== '';
      if (op === 'not_set') return (c) => (get(c) ?? '') === '';
      const needle = text(value);
      return (c) => get(c)?.toLowerCase().includes(needle) ?? false;
    }
  }
}
