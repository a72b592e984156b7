import { PENDING_STATES } from '../history/index.js';
import { str, strs, type ParsedArgs } from './args.js';
import { UsageError } from './command.js';
import { eventFlags, timeFlag } from './flags.js';

/** Every state `--outcome` takes: a handler's latest (run or placement), or the delivery's own. */
export const OUTCOMES = [
  'completed',
  'skipped',
  'retry',
  'delay',
  'dead',
  'pause',
  'wait',
  'cancelled',
  'error',
  'pending',
  'invalid',
  'no_handlers',
  ...PENDING_STATES,
];

/** The options of the history's filters, shared by `deliveries` and `rerun`. */
export const DELIVERY_FILTER_OPTIONS = {
  event: { type: 'string', multiple: true },
  conversation: { type: 'string' },
  contact: { type: 'string' },
  outcome: { type: 'string' },
  since: { type: 'string' },
} as const;

/** The filters as given, checked: events against the catalogue, ids numeric, a known outcome, a readable time. */
export interface DeliveryFilters {
  events: string[];
  conversation?: string;
  contact?: string;
  outcome?: string;
  since?: number;
}

/** Reads the filters; `schedule` as an event (the runs of schedules) only where `allowSchedule`. */
export function deliveryFilters(values: ParsedArgs['values'], allowSchedule = false): DeliveryFilters {
  const f: DeliveryFilters = { events: [] };
  const events = strs(values, 'event');
  f.events = allowSchedule && events.length === 1 && events[0] === 'schedule' ? ['schedule'] : eventFlags(events);
  for (const name of ['conversation', 'contact'] as const) {
    const v = str(values, name);
    if (v === undefined) continue;
    if (!/^\d+$/.test(v.trim())) throw new UsageError(`--${name}: expected a numeric id, got "${v}"`);
    f[name] = v.trim();
  }
  const outcome = str(values, 'outcome');
  if (outcome !== undefined) {
    if (!OUTCOMES.includes(outcome)) throw new UsageError(`--outcome: expected one of ${OUTCOMES.join(', ')}, got "${outcome}"`);
    f.outcome = outcome;
  }
  const since = str(values, 'since');
  if (since !== undefined) f.since = timeFlag('since', since);
  return f;
}
