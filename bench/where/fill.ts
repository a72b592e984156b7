// bench/where: realistic deliveries written to a history with kept bodies, through the real HistoryWriter
// (src/history/writer.ts: the fan-out write the `events` worker makes, the kept body included, then one
// handler attempt), so the keys are exactly those a worker leaves.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { HistoryWriter } from '../../src/history/writer.js';
import { createLogger } from '../../src/log/index.js';

/** A seeded generator (mulberry32): the same bodies on every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST = ['Zoe', 'Maria', 'Ahmed', 'Li', 'Sam', 'Priya', 'Tomás', 'Fatima', 'Jon', 'Aiko', 'Olu', 'Nina', 'Karim', 'Ella'];
const LAST = ['Adams', 'Garcia', 'Hassan', 'Wei', 'Okafor', 'Singh', 'Silva', 'Haddad', 'Berg', 'Sato', 'Novak', 'Costa'];
const WORDS = (
  'hello hi thanks please order delivery today tomorrow price discount size colour available stock when where how much ' +
  'can you send me the invoice receipt address change cancel refund return broken late missing package tracking number ' +
  'shipping payment card cash transfer paid confirm confirmed appointment booking time slot morning afternoon evening ' +
  'monday tuesday wednesday thursday friday weekend store branch open closed hours menu item product variant black white ' +
  'blue red large small medium quantity two three one more less again still waiting urgent asap sorry great perfect ok'
).split(' ');
const CITIES = ['Cairo', 'Lagos', 'Lisbon', 'Nairobi', 'Dubai', 'Riyadh', 'Casablanca', 'Accra', 'Amman', 'Doha'];

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
const int = (r: () => number, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
const iso = (ms: number) => new Date(ms).toISOString();

/** A message text of 3–70 words, now and then with an order number, a phone or an email (as customers write). */
function text(r: () => number): string {
  const words = Array.from({ length: int(r, 3, 70) }, () => pick(r, WORDS));
  const x = r();
  if (x < 0.15) words.splice(int(r, 0, words.length), 0, `#${int(r, 1000, 99999)}`);
  else if (x < 0.22) words.splice(int(r, 0, words.length), 0, `+${int(r, 20, 999)} ${int(r, 100, 999)} ${int(r, 1000000, 9999999)}`);
  else if (x < 0.27) words.push(`${pick(r, FIRST).toLowerCase()}.${int(r, 1, 999)}@example.com`);
  const s = words.join(' ');
  return s.charAt(0).toUpperCase() + s.slice(1) + pick(r, ['.', '?', '!', '', ' 🙏', ' 👍']);
}

/** One delivery: its event name, key and raw body (as the workspace would send it); the mix is 70 % messages. */
export function realisticBody(r: () => number, at: number, marker?: string): { name: string; key: string; raw: Buffer } {
  const id = `evt_${randomBytes(16).toString('hex')}`;
  const conv = int(r, 1, 40_000);
  const contact = int(r, 1, 60_000);
  const x = r();
  let name: string;
  let data: object;
  if (x < 0.7 || marker) {
    name = r() < 0.75 ? 'message.received' : 'message.sent';
    const inbound = name === 'message.received';
    data = {
      id: int(r, 1, 9_000_000),
      conversation_id: conv,
      type: 'message',
      direction: inbound ? 'inbound' : 'outbound',
      sender_type: inbound ? 'contact' : 'user',
      user_id: inbound ? null : int(r, 1, 40),
      body: marker ? `${text(r)} ${marker}` : text(r),
      content_type: 'text',
      status: inbound ? null : 'sent',
      created_at: iso(at),
    };
  } else if (x < 0.8) {
    name = pick(r, ['conversation.created', 'conversation.opened', 'conversation.closed', 'conversation.assigned']);
    data = {
      id: conv,
      contact_id: contact,
      channel: { id: int(r, 1, 4), name: 'WhatsApp', type: 'whatsapp' },
      status: name === 'conversation.closed' ? 'closed' : 'open',
      subject: r() < 0.5 ? null : text(r).slice(0, 60),
      assignee: r() < 0.3 ? null : { type: 'user', id: int(r, 1, 40) },
      last_message_at: iso(at - int(r, 0, 3_600_000)),
      closed_at: name === 'conversation.closed' ? iso(at) : null,
      created_at: iso(at - int(r, 60_000, 30 * 86_400_000)),
    };
  } else if (x < 0.9) {
    name = 'contact.created';
    const [first, last] = [pick(r, FIRST), pick(r, LAST)];
    data = {
      id: contact,
      name: `${first} ${last}`,
      phone: `+${int(r, 20, 999)}${int(r, 100000000, 999999999)}`,
      email: r() < 0.6 ? `${first.toLowerCase()}.${last.toLowerCase()}${int(r, 1, 99)}@example.com` : null,
      lifecycle_stage_id: r() < 0.5 ? null : int(r, 1, 8),
      blocked: false,
      created_at: iso(at),
      updated_at: iso(at),
    };
  } else {
    name = 'order.created';
    const items = Array.from({ length: int(r, 1, 3) }, () => {
      const q = int(r, 1, 4);
      const price = int(r, 5, 400);
      return {
        id: int(r, 1, 9_000_000),
        product_id: int(r, 1, 5000),
        product_variant_id: r() < 0.5 ? null : int(r, 1, 20000),
        name: `${pick(r, WORDS)} ${pick(r, WORDS)}`,
        sku: `SKU-${int(r, 10000, 99999)}`,
        quantity: q,
        unit_price: `${price}.00`,
        line_total: `${price * q}.00`,
      };
    });
    data = {
      id: int(r, 1, 900_000),
      number: int(r, 1000, 999_999),
      contact_id: contact,
      conversation_id: r() < 0.7 ? conv : null,
      deal_id: null,
      owner_id: r() < 0.5 ? null : int(r, 1, 40),
      status: 'new',
      source: pick(r, ['whatsapp', 'web', 'manual']),
      payment: { method: pick(r, ['cash', 'card', null]), status: 'unpaid', reference: null, paid_at: null },
      delivery: { address: `${int(r, 1, 300)} ${pick(r, LAST)} Street`, city: pick(r, CITIES), area: null, fee: '15.00' },
      items,
      subtotal: '0.00',
      discount: '0.00',
      total: `${items.reduce((a, i) => a + Number(i.line_total), 0)}.00`,
      notes: r() < 0.3 ? text(r).slice(0, 120) : null,
      external_id: null,
      confirmed_at: null,
      delivered_at: null,
      cancelled_at: null,
      cancel_reason: null,
      created_at: iso(at),
      updated_at: iso(at),
    };
  }
  return { name, key: id, raw: Buffer.from(JSON.stringify({ id, event: name, created_at: iso(at), data })) };
}

export interface FillOptions {
  readonly prefix: string;
  readonly n: number;
  /** KEEP_BODIES (ms; 0: none kept). */
  readonly keepBodiesMs: number;
  /** Received times spread evenly from `fromMs` (the oldest) to `toMs`. */
  readonly fromMs: number;
  readonly toMs: number;
  /** A marker text put into the message body of delivery `i` (0 = the oldest), when it returns one. */
  readonly marker?: (i: number) => string | undefined;
  readonly seed?: number;
}

/**
 * Writes `n` deliveries' history as the worker does (fan-out with the kept body, then one completed attempt of one
 * handler), oldest first; waits for Redis every 2 000 so the writes stay bounded. Returns the raw body bytes in all.
 */
export async function fillHistory(redis: Redis, o: FillOptions): Promise<{ bodyBytes: number; keys: string[] }> {
  const writer = new HistoryWriter(
    redis,
    { prefix: o.prefix, ttlMs: 7 * 86_400_000, keepBodiesMs: o.keepBodiesMs },
    createLogger({ level: 'warn' }),
  );
  const r = seeded(o.seed ?? 42);
  const keys: string[] = [];
  let bodyBytes = 0;
  for (let i = 0; i < o.n; i++) {
    const at = Math.round(o.fromMs + ((o.toMs - o.fromMs) * i) / Math.max(1, o.n - 1));
    const d = realisticBody(r, at, o.marker?.(i));
    keys.push(d.key);
    bodyBytes += d.raw.byteLength;
    const receipt = { receivedAt: iso(at), queuedAt: at + 3, secretIndex: 0, bytes: d.raw.byteLength, source: 'webhook' };
    const handler = { id: 'bench-noop', placement: 'queued', priority: 'normal' };
    writer.fannedOut(
      d.key,
      receipt,
      { event: d.name, conversation: null, contact: null, handlers: [handler], raw: d.raw, at: at + 5 },
      at + 6,
    );
    writer.attempt(
      d.key,
      { kind: 'attempt', at: at + 40, startedAt: at + 8, handler: 'bench-noop', attempt: 1, outcome: 'completed', steps: [], calls: [] },
      `d/${d.key}/bench-noop`,
    );
    if (i % 2000 === 1999) {
      writer.flush();
      await redis.ping();
    }
  }
  writer.flush();
  await redis.ping();
  return { bodyBytes, keys };
}
