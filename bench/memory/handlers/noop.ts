// bench/memory: a handler that does nothing, so every delivery leaves exactly
// one completed `events` job and one completed `handlers` job behind (retained 24 h).
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'bench-noop',
  on: ['message.received'],
  async handle() {},
});
