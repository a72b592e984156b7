/** The names of the API spec's Events table: the 11 events the workspace pushes. */
export const EVENT_NAMES = [
  'message.received',
  'message.sent',
  'conversation.created',
  'conversation.opened',
  'conversation.closed',
  'conversation.assigned',
  'contact.created',
  'contact.lifecycle_changed',
  'lead.created',
  'lead.won',
  'lead.lost',
] as const;

/** One of the 11 event names the workspace pushes. */
export type EventName = (typeof EVENT_NAMES)[number];
