/** Test handler: records each task that fell due. */
import { defineHandler } from 'switchyard';
import { polledRuns } from './runs.js';

export default defineHandler({
  id: 'task-due',
  on: ['task.due'],
  handle(event, ctx) {
    polledRuns().push({ handler: 'task-due', key: ctx.delivery.key, id: event.data.id });
  },
});
