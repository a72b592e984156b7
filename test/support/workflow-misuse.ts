/**
 * The refusals of test/support/handlers/workflow-calls/misuse.ts, by subject: what the run's dead-letter
 * reason must say, in the worker and in testHandler alike (issue 32 items 1–3).
 */
const REACH = `a run's steps and record, and its delivery's deduplication, are kept for DEDUPE_TTL (7d) plus a day, so a longer one could run its steps again or be run twice; raise DEDUPE_TTL (and HISTORY_TTL, to keep its trace) to allow longer`;
const JSON_TAIL = 'store plain JSON (objects, arrays, strings, finite numbers, booleans, null)';

export const MISUSE_REASONS: Record<string, string | RegExp> = {
  'bad-event': `HandlerConfigError: ctx.waitForEvent("reply") in handler "wf-misuse": "event" must be an event name, got "message.recieved"; did you mean "message.received"?`,
  'timeout-0': `HandlerConfigError: ctx.waitForEvent("reply") in handler "wf-misuse": timeout must be a positive duration such as '15m' or a number of milliseconds, got 0`,
  'typo-match': `HandlerConfigError: ctx.waitForEvent("reply") in handler "wf-misuse": "match" must be 'conversation', 'contact' or { on: 'conversation' | 'contact', where: (event) => boolean }, got "convresation"; did you mean 'conversation'?`,
  'sleep-400d': `HandlerConfigError: ctx.sleep("long") in handler "wf-misuse": 400d is longer than the longest sleep or wait, 7d: ${REACH}`,
  'sleep-1e13':
    /^HandlerConfigError: ctx\.sleep\("long"\) in handler "wf-misuse": \d+(\.\d)?d is longer than the longest sleep or wait, 7d: /,
  'until-years':
    /^HandlerConfigError: ctx\.sleepUntil\("later"\) in handler "wf-misuse": 109\d(\.\d)?d is longer than the longest sleep or wait, 7d: .*raise DEDUPE_TTL/,
  'state-map': `HandlerConfigError: ctx.state.set() in handler "wf-misuse" (state conversation:__CONV__): value.byContact is a Map; ${JSON_TAIL}`,
  'state-set': `HandlerConfigError: ctx.state.update() in handler "wf-misuse" (state conversation:__CONV__): value.tags[1] is a Set; ${JSON_TAIL}`,
  'state-bigint': `HandlerConfigError: ctx.state.set() in handler "wf-misuse" (state conversation:__CONV__): value.total is a BigInt (10n), which JSON cannot hold; store it as a string; ${JSON_TAIL}`,
  'state-circular': `HandlerConfigError: ctx.state.set() in handler "wf-misuse" (state conversation:__CONV__): value.self.back refers back to an object that contains it (a circular structure); ${JSON_TAIL}`,
};

/** The expected reason for a run of conversation `conv`. */
export function misuseReason(subject: string, conv: number): string | RegExp {
  const r = MISUSE_REASONS[subject] as string | RegExp;
  return typeof r === 'string' ? r.replace('__CONV__', String(conv)) : r;
}
