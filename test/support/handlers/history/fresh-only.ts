/** History tests: skips conversations opened more than a minute ago (maxAge). */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'traced-fresh',
  on: ['conversation.opened'],
  maxAge: '1m',
  async handle() {},
});
