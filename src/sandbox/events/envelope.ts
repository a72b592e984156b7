import { randomUUID } from 'node:crypto';

/** Events the sandbox emits (spec: Events). */
export const EVENT_NAMES = [
  'message.received', 'message.sent',
  'conversation.created', 'conversation.opened', 'conversation.closed', 'conversation.assigned',
  'contact.created', 'contact.lifecycle_changed',
  'lead.created', 'lead.won', 'lead.lost',
] as const;
export type EventName = (typeof EVENT_NAMES)[number];

/** The canonical envelope of ARCHITECTURE.md: `{id, event, created_at, data}`. */
export interface Envelope {
  id: string;
  event: EventName;
  created_at: string;
  data: unknown;
}

/** A fresh event id: `evt_` + 32 hex digits. */
export function newEventId(): string {
  return `evt_${randomUUID().replace(/-/g, '')}`;
}

/** Builds the envelope; `data` is the resource exactly as the API would answer it. */
export function envelope(event: EventName, data: unknown, now: number, id: string = newEventId()): Envelope {
  return { id, event, created_at: new Date(now).toISOString(), data };
}
