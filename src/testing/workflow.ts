import { isEventName, type WorkspaceEvent } from '../events/index.js';
import { HandlerConfigError, type HandlerState, type WorkflowContext } from '../handler/index.js';
import { durationOf, timeOf, type Arrival, jsonCopy } from '../worker/index.js';
import type { TestEventInput } from './types.js';

/**
 * The workflow part of `ctx` in testHandler is the virtual one of
 * src/worker/virtual-workflow.ts (sleeps and waits on a virtual clock, no real
 * waiting; `ctx.state` in memory; the worker's rules), with `options.events`
 * as the events a wait may see or `cancelOn` may be triggered by. In
 * testSchedule each is refused, as the worker refuses it for schedules.
 */

const isEvent = (v: unknown): v is WorkspaceEvent =>
  typeof v === 'object' && v !== null && isEventName((v as { name?: unknown }).name) && 'data' in v;

/**
 * `options.events` with each one's receipt: `at` (a time), `after` (a
 * duration after the run's own receipt), else 1 ms after the previous one (the
 * first 1 ms after the run's own), so in order, after the run's event.
 */
export function arrivals(events: readonly TestEventInput[] | undefined, start: number, who: string): Arrival[] {
  if (events === undefined) return [];
  if (!Array.isArray(events)) throw new TypeError(`${who}: events must be an array of events (createEvent) or { event, at? , after? }`);
  let last = start;
  return events.map((entry: unknown, i) => {
    let at: number;
    let event: unknown = entry;
    if (!isEvent(entry)) {
      if (typeof entry !== 'object' || entry === null || !isEvent((entry as { event?: unknown }).event)) {
        throw new TypeError(`${who}: events[${i}] must be an event (createEvent) or { event, at?, after? }`);
      }
      const e = entry as { event: WorkspaceEvent; at?: unknown; after?: unknown };
      if (e.at !== undefined && e.after !== undefined) throw new TypeError(`${who}: events[${i}] gives both at and after; give one`);
      event = e.event;
      at =
        e.at !== undefined
          ? timeOf(`${who}: events[${i}].at`, e.at)
          : e.after !== undefined
            ? start + durationOf(`${who}: events[${i}].after`, e.after, true)
            : last + 1;
    } else {
      at = last + 1;
    }
    last = Math.max(last, at);
    return { event: jsonCopy(event as WorkspaceEvent), at };
  });
}

/**
 * The workflow part of a schedule's `ctx`: the worker runs schedules without
 * durable sleeps, waits or state, so each is a HandlerConfigError there (the
 * run is dead at once); so it is in testSchedule, saying why.
 */
export function refusedWorkflow(scheduleId: string): WorkflowContext {
  const refuse = (what: string): never => {
    throw new HandlerConfigError(
      `${what} in schedule "${scheduleId}": a schedule's run cannot sleep, wait for an event or keep state ` +
        '(the worker runs schedules without them); do it in a handler',
    );
  };
  return {
    sleep: async () => refuse('ctx.sleep'),
    sleepUntil: async () => refuse('ctx.sleepUntil'),
    waitForEvent: async () => refuse('ctx.waitForEvent'),
    get state(): HandlerState {
      return { get: async () => refuse('ctx.state'), set: async () => refuse('ctx.state'), update: async () => refuse('ctx.state') };
    },
  };
}
