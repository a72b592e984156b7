/** Catches what ctx.sleep throws and returns normally (subject `swallow`): the run is parked all the same; `nostate`: uses ctx.state without state or orderBy. */
import { defineHandler } from 'switchyard';
import { record } from './record.js';

export default defineHandler({
  id: 'wf-swallow',
  on: ['conversation.opened'],
  async handle(event, ctx) {
    if (event.data.subject === 'nostate') {
      await ctx.state.get();
      return;
    }
    if (event.data.subject !== 'swallow') return;
    record({ h: 'swallow', at: 'start', conv: event.data.id });
    try {
      await ctx.sleep('nap', 700);
    } catch {
      record({ h: 'swallow', at: 'caught', conv: event.data.id });
      return;
    }
    record({ h: 'swallow', at: 'done', conv: event.data.id });
  },
});
