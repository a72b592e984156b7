export { createReceiverApp, type ReceiverAppOptions } from './app.js';
export { webhookHandler, type WebhookRouteDeps } from './webhook-route.js';
export type { DeliverySink } from '../queue/index.js';
export { readBody, type BodyResult, type BodyFailure } from './body.js';
export type { DeliveryOutcome, DeliveryReport, ReceiverHooks } from './outcomes.js';
export type { ReadinessProbe } from './health.js';
