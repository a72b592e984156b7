import { readFile } from 'node:fs/promises';
import { isEventName, suggestEventName, validateEvent, type EventName, type WorkspaceEvent, parseEnvelope } from '../events/index.js';
import { FIXTURES_DIR, InputError, itemFromText } from '../replay/index.js';
import { KEPT_HEADERS } from '../queue/index.js';
import { signBody } from './signing.js';
import { SIGNATURE_HEADER } from '../spec/index.js';

/** A delivery a test cannot use: an unreadable or malformed file, or a body that is not a valid event. */
export class DeliveryError extends Error {
  readonly code = 'testing_delivery';
  constructor(message: string) {
    super(message);
    this.name = 'DeliveryError';
  }
}

/** One webhook delivery: its exact body bytes and the headers recorded with it (never a signature). */
export interface Delivery {
  /** Where it came from (a file path), for messages. */
  readonly source: string;
  readonly bytes: Buffer;
  /** Lower-case headers of a fixture; empty for a file of plain event JSON. */
  readonly headers: Readonly<Record<string, string>>;
  /** The fixture's `received_at`, when it has one. */
  readonly receivedAt: string | undefined;
}

/** What {@link signDelivery} returns: a body and headers ready for `fetch(url, { method: 'POST', body, headers })`. */
export interface SignedRequest {
  readonly body: Buffer;
  readonly headers: Record<string, string>;
}

/**
 * Reads a delivery file as `switchyard replay` does: a fixture
 * (`switchyard.delivery/1`, as the receiver captures them) gives its exact
 * body bytes and headers; any other JSON file is taken as the event envelope
 * itself, byte for byte.
 */
export async function readDelivery(file: string): Promise<Delivery> {
  let text: Buffer;
  try {
    text = await readFile(file);
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new DeliveryError(`${file}: cannot be read (${reason}); expected a fixture or an event envelope JSON file`);
  }
  try {
    return itemFromText(file, text);
  } catch (err) {
    if (err instanceof InputError) throw new DeliveryError(err.message);
    throw err;
  }
}

/** The package's own realistic delivery of event `name` (its `fixtures/<name>.json`). */
export async function loadFixture(name: EventName): Promise<Delivery> {
  if (!isEventName(name)) {
    const hint = suggestEventName(String(name));
    throw new DeliveryError(
      `no fixture for unknown event ${JSON.stringify(name)}${hint ? `; did you mean "${hint}"?` : ''} (expected one of EVENT_NAMES)`,
    );
  }
  return readDelivery(`${FIXTURES_DIR}${name}.json`);
}

/**
 * The event a handler's `handle` receives for this delivery, parsed and
 * checked against the event catalogue exactly as the worker does. Throws a
 * DeliveryError saying why when the worker would dead-letter it instead, or
 * when `name` is given and the delivery is another event.
 */
export function toEvent<N extends EventName>(delivery: Delivery | Uint8Array, name: N): WorkspaceEvent<N>;
export function toEvent(delivery: Delivery | Uint8Array): WorkspaceEvent;
export function toEvent(delivery: Delivery | Uint8Array, name?: EventName): WorkspaceEvent {
  const { bytes, source } = delivery instanceof Uint8Array ? { bytes: delivery, source: 'the delivery' } : delivery;
  const result = validateEvent(parseEnvelope(bytes));
  if (!result.ok) {
    const issues = result.issues?.length ? `: ${result.issues.join('; ')}` : '';
    throw new DeliveryError(`${source}: not a valid event (${result.reason}): ${result.message}${issues}`);
  }
  if (name !== undefined && result.event.name !== name) {
    throw new DeliveryError(`${source}: is a "${result.event.name}" event, expected "${name}"`);
  }
  return result.event;
}

/**
 * Signs a delivery the way the workspace does: `sha256=` + the hex
 * HMAC-SHA256 of the exact body bytes with `secret`, in the signature header
 * (`X-Service-Signature` unless `header` names the receiver's SIGNATURE_HEADER),
 * beside a JSON content type and the recorded headers replay sends again
 * (content type, user agent, request ids).
 */
export function signDelivery(delivery: Delivery | Uint8Array | string, secret: string, options: { header?: string } = {}): SignedRequest {
  if (typeof secret !== 'string' || secret === '')
    throw new DeliveryError("signDelivery: secret must be a non-empty string (the receiver's WEBHOOK_SECRETS entry)");
  const body =
    typeof delivery === 'string' ? Buffer.from(delivery, 'utf8') : delivery instanceof Uint8Array ? Buffer.from(delivery) : delivery.bytes;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  // As replay does: of the recorded headers only those worth sending again (content type, user agent, request ids).
  const recorded = typeof delivery === 'object' && !(delivery instanceof Uint8Array) ? delivery.headers : {};
  for (const [k, v] of Object.entries(recorded)) {
    if ((KEPT_HEADERS as readonly string[]).includes(k.toLowerCase())) headers[k.toLowerCase()] = v;
  }
  headers[(options.header ?? SIGNATURE_HEADER).toLowerCase()] = signBody(body, secret);
  return { body, headers };
}
