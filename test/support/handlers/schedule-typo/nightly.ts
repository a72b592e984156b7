/** Test schedule naming a workspace no deployment of the tests serves ("betta"): start-up must refuse it. */
import { defineSchedule } from 'switchyard';

export default defineSchedule({
  id: 'nightly',
  every: '1d',
  workspaces: ['acme', 'betta'],
  handle: () => undefined,
});
