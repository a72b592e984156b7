import { randomUUID } from 'node:crypto';
import type { WebhookEventName as EventName } from '../../spec/index.js';

/** The canonical envelope Switchyard documents: `{id, event, created_at, data}`. */
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
