import type { WebhookEventName as EventName } from '../../spec/index.js';

/** Delivery status of one event, as `/_sandbox/deliveries` lists it. */
export interface DeliveryRecord {
  id: string;
  event: EventName;
  /** The sandbox workspace the event happened in: it is delivered to that workspace's URL only. */
  workspace_id: number;
  url: string | null;
  state: 'pending' | 'delivered' | 'failed' | 'not_sent';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

/** A fresh record: nothing attempted yet. */
export function newRecord(id: string, event: EventName, workspaceId: number): DeliveryRecord {
  return {
    id,
    event,
    workspace_id: workspaceId,
    url: null,
    state: 'not_sent',
    attempts: 0,
    last_status: null,
    last_error: null,
    next_attempt_at: null,
    delivered_at: null,
  };
}

/** Makes a record ready to be sent again: no attempts, no answers. */
export function resetRecord(record: DeliveryRecord): void {
  Object.assign(record, { attempts: 0, last_status: null, last_error: null, next_attempt_at: null, delivered_at: null });
}
