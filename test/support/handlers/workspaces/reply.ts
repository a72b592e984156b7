/**
 * Waits for its conversation's next `message.sent`, then creates a contact named `reply <conv> <body>` in its
 * workspace's API.
 */
import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'ws-reply',
  on: ['conversation.closed'],
  async handle(event, ctx) {
    const conv = event.data.id;
    const reply = await ctx.waitForEvent('reply', { event: 'message.sent', match: 'conversation', timeout: '60s' });
    await ctx.api.contacts.create({ name: `reply ${conv} ${reply ? reply.data.body : 'none'}` });
  },
});
