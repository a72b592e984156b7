/** Test handler: one task per move a record carries no time of (the events reconcile recovers from its snapshot), titled by the move. */
import { defineHandler, type WorkspaceEvent } from 'switchyard';

type Move = WorkspaceEvent<'conversation.opened' | 'conversation.assigned' | 'contact.lifecycle_changed' | 'lead.won'>;

function title(event: Move): string {
  switch (event.name) {
    case 'conversation.opened':
      return `opened ${event.data.id}`;
    case 'conversation.assigned':
      return `assigned ${event.data.id} to ${event.data.assignee?.type}:${event.data.assignee?.id}`;
    case 'contact.lifecycle_changed':
      return `stage ${event.data.contact_id} ${event.data.previous?.name ?? 'none'} > ${event.data.lifecycle.name}`;
    case 'lead.won':
      return `won ${event.data.id}`;
  }
}

export default defineHandler({
  id: 'record-move',
  on: ['conversation.opened', 'conversation.assigned', 'contact.lifecycle_changed', 'lead.won'],
  abilities: ['tasks:write'],
  async handle(event, ctx) {
    await ctx.api.tasks.create({
      title: title(event),
      due_at: new Date(Date.now() + 86_400_000).toISOString(),
      description: `source ${ctx.delivery.source ?? 'webhook'}`,
    });
  },
});
