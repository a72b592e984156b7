/** The names of the API spec's Events table: the 11 events the workspace pushes as webhooks. */
export const WEBHOOK_EVENT_NAMES = [
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

/**
 * Events the workspace does not push: Switchyard derives them by polling
 * listings (`GET /orders?since=`, `GET /tasks?due_before=`) in worker processes
 * where a handler subscribes to one (docs/handlers.md, "Polled sources").
 */
export const DERIVED_EVENT_NAMES = ['order.created', 'order.status_changed', 'task.due'] as const;

/** Every event a handler may subscribe to: the workspace's webhooks, then the derived ones. */
export const EVENT_NAMES = [...WEBHOOK_EVENT_NAMES, ...DERIVED_EVENT_NAMES] as const;

/** One of the event names a handler may subscribe to. */
export type EventName = (typeof EVENT_NAMES)[number];
/** One of the 11 event names the workspace pushes. */
export type WebhookEventName = (typeof WEBHOOK_EVENT_NAMES)[number];
/** One of the events Switchyard derives by polling. */
export type DerivedEventName = (typeof DERIVED_EVENT_NAMES)[number];
