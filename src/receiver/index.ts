export { createReceiverApp, type ReceiverAppOptions } from './app.js';
export { webhookHandler, type WebhookRouteDeps } from './webhook-route.js';
export type { DeliverySink } from '../queue/delivery.js';
export { readBody, type BodyResult, type BodyFailure } from './body.js';
export type { DeliveryOutcome, DeliveryReport } from '../lifecycle/ingest-events.js';
export type { ReadinessProbe } from './health.js';
