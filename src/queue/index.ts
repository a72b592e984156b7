export { EVENTS_QUEUE, HANDLERS_QUEUE, QUEUE_NAMES, ingestKeys, type QueueName } from './names.js';
export { encodeBody, deliveryBytes, KEPT_HEADERS, type DeliverySink, type StoredDelivery } from './delivery.js';
export { IngestStore, type IngestOutcome } from './ingest.js';
export { IngestPump, type IngestPumpOptions } from './pump.js';
export { EVENTS_JOB_OPTIONS, handlerJobOptions, type HandlerJobRetry } from './job-options.js';
export { openQueues, type Queues } from './queues.js';
