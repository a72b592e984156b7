import { UnrecoverableError, type Queue } from 'bullmq';
import { jobIdFor, parseEnvelope } from '../events/envelope.js';
import { validateEvent } from '../events/catalogue.js';
import type { Handler } from '../handler.js';
import { deliveryBytes, type StoredDelivery } from '../queue/delivery.js';
import { handlerJobOptions } from '../queue/job-options.js';
import type { HandlerJobData } from '../queue/jobs.js';

/** Why an `events` job was dead-lettered without fan-out (shown by `dlq list`). */
export class InvalidDeliveryError extends UnrecoverableError {
  readonly code = 'invalid_delivery';
  constructor(readonly reason: string, message: string, readonly issues: readonly string[] = []) {
    super(`${reason}: ${message}${issues.length ? ` [${issues.join('; ')}]` : ''}`);
    this.name = 'InvalidDeliveryError';
  }
}

/** The handlers subscribed to an event name. */
export function subscribers(handlers: readonly Handler[], name: string): Handler[] {
  return handlers.filter((h) => (h.on as readonly string[]).includes(name));
}

/**
 * Processes an `events` job: validates the stored delivery against the
 * catalogue and adds one `handlers` job per subscribed handler, with job id
 * (delivery key, handler id) and its handler's `retry` attempts and back-off,
 * so each handler retries and dead-letters on its
 * own and a repeated fan-out adds nothing. An invalid delivery is
 * dead-lettered with its reason and issues; its raw body stays in the job.
 */
export async function dispatch(
  delivery: StoredDelivery,
  handlers: readonly Handler[],
  handlersQueue: Pick<Queue, 'addBulk'>,
): Promise<{ handlers: string[] }> {
  const envelope = parseEnvelope(deliveryBytes(delivery));
  const result = validateEvent(envelope);
  if (!result.ok) throw new InvalidDeliveryError(result.reason, result.message, result.issues ?? []);
  const { event } = result;
  const targets = subscribers(handlers, event.name);
  if (targets.length === 0) return { handlers: [] };
  const data = (h: Handler): HandlerJobData => ({
    key: delivery.key,
    handlerId: h.id,
    receivedAt: delivery.receivedAt,
    event: { id: event.id, name: event.name, createdAt: event.createdAt, data: event.data },
  });
  await handlersQueue.addBulk(
    targets.map((h) => ({ name: h.id, data: data(h), opts: { ...handlerJobOptions(h.retry), jobId: jobIdFor(delivery.key, h.id) } })),
  );
  return { handlers: targets.map((h) => h.id) };
}
