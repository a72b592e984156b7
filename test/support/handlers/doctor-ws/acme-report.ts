/** Test schedule that runs in workspace `acme` only: doctor checks its abilities against acme's token alone. */
import { defineSchedule } from 'switchyard';

export default defineSchedule({
  id: 'acme-report',
  every: '1d',
  workspaces: ['acme'],
  abilities: ['tasks:write'],
  handle: () => undefined,
});
