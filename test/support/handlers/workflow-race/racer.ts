/**
 * The wait-race run: a step, then the test's hook (which sends the awaited
 * reply at some point around the wait's registration), then a wait for the
 * conversation's next inbound message (default lookback, 1 h), then one note
 * naming the reply. Tallies (and the times of each attempt's start, wake and end) in `globalThis.__syWfr` (in-process tests only).
 */
import { defineHandler } from 'switchyard';

type Entry = { step: number; attempt: number; woke: number; done: number; got: string[]; times: number[] };
type Tally = Map<string, Entry>;
const g = globalThis as {
  __syWfr?: Tally;
  __syWfrHook?: (event: { id: string; data: { id: number } }) => Promise<void> | void;
  __syWfrConv?: number;
};

function tally(id: string): Entry {
  const t = (g.__syWfr ??= new Map<string, Entry>());
  let e = t.get(id);
  if (!e) {
    e = { step: 0, attempt: 0, woke: 0, done: 0, got: [], times: [] };
    t.set(id, e);
  }
  return e;
}

export default defineHandler({
  id: 'wfr-racer',
  on: ['conversation.created'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    const id = event.id ?? ctx.delivery.key;
    await ctx.step('before', async () => {
      tally(id).step++;
      return 1;
    });
    tally(id).attempt++;
    tally(id).times.push(Date.now());
    await g.__syWfrHook?.({ id, data: { id: event.data.id } });
    const reply = await ctx.waitForEvent('reply', { event: 'message.received', match: 'conversation', timeout: '1h' });
    const got = reply ? (reply.id ?? 'no id') : 'timeout';
    tally(id).woke++;
    tally(id).times.push(Date.now());
    await ctx.api.notes.create(g.__syWfrConv ?? 1, { body: `after ${id} ${got}` });
    const e = tally(id);
    e.done++;
    e.got.push(got);
    e.times.push(Date.now());
  },
});
