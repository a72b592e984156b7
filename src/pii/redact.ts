import { createHash } from 'node:crypto';
import { isEventName, type EventName } from '../events/index.js';
import { EMAIL_FIELDS, PHONE_FIELDS, replaceEmails, replacePhones } from './mask.js';

/**
 * Redaction of captured bodies, so captures become shareable fixtures.
 * Only personal data is replaced: a person's name, email and phone number
 * (fields, and inside any text), message bodies and other free text a person
 * wrote. Names of things stay as they are (lifecycle stages, labels, channels,
 * templates, pipelines, products, a lead's title), so a handler that branches
 * on them behaves the same on a redacted replay as on the original.
 * Fakes are stable: the same original always yields the same fake (so a
 * contact stays one contact across a capture set and replays keep their
 * relations), and the result is still valid JSON of the same shape, so it
 * still validates. Fakes derive from a SHA-256 of (salt, kind, original); set
 * a salt when the originals are guessable (phone numbers) and the captures
 * leave your team.
 */
export interface Redactor {
  /** Redacts a raw body; a body that is not JSON has its emails and phone numbers replaced. */
  body(bytes: Uint8Array): Buffer;
  /** Redacts one JSON value (already parsed): an event envelope, or any other value. */
  value(v: unknown): unknown;
}

const FIRST = [
  'Alex',
  'Sam',
  'Robin',
  'Kim',
  'Jordan',
  'Taylor',
  'Casey',
  'Morgan',
  'Jamie',
  'Riley',
  'Avery',
  'Quinn',
  'Charlie',
  'Drew',
  'Emery',
  'Finley',
];
const LAST = [
  'Smith',
  'Jones',
  'Garcia',
  'Müller',
  'Rossi',
  'Dubois',
  'Silva',
  'Novak',
  'Berg',
  'Kowalski',
  'Tanaka',
  'Okafor',
  'Larsen',
  'Costa',
  'Evans',
  'Moreau',
];

/** Always a person's name. */
const PERSON_NAME_KEYS = new Set(['first_name', 'last_name', 'full_name', 'display_name', 'contact_name', 'username', 'nickname']);
const EMAIL_KEYS = new Set(EMAIL_FIELDS);
const PHONE_KEYS = new Set(PHONE_FIELDS);
/** Free text a person wrote. */
const BODY_KEYS = new Set([
  'body',
  'text',
  'caption',
  'message',
  'content',
  'note',
  'notes',
  'comment',
  'snippet',
  'preview',
  'last_message',
  'subject',
  'title',
  'description',
  'summary',
  'address',
]);
/** `name` inside an object held under such a key names a thing, not a person: kept. */
const THING_WORDS = [
  ...['stage', 'lifecycle', 'channel', 'label', 'categor(y|ies)', 'product', 'variant', 'item', 'pipeline', 'tag', 'team'],
  ...['compan(y|ies)', 'organi[sz]ation', 'source', 'workspace', 'account', 'template', 'segment', 'deal', 'lead', 'order'],
];
const THING_PARENTS = new RegExp(`(^|_)(${THING_WORDS.join('|')})s?(_|$)`, 'i');

/**
 * Objects inside an event's `data` whose `name` names a thing, by the event
 * catalogue's resource of that event ('' is `data` itself): a lead's `name` is
 * its title; the `previous` and `lifecycle` of a lifecycle change are stages.
 * Elsewhere a `name` is a person's (a contact's) unless its parent key says
 * otherwise ({@link THING_PARENTS}); unknown shapes are redacted.
 */
const THING_OBJECTS: Readonly<Partial<Record<EventName, readonly string[]>>> = {
  'contact.lifecycle_changed': ['previous', 'lifecycle'],
  'lead.created': [''],
  'lead.won': [''],
  'lead.lost': [''],
};
/** Where an envelope keeps its event name and its data (as src/events/envelope.ts reads them). */
const NAME_FIELDS = ['event', 'type', 'event_type'] as const;
const DATA_FIELDS = ['data', 'payload'] as const;

/** Paths (dotted, array items under their array's key) of the objects of `root` whose `name` is kept. */
function thingPaths(root: unknown): ReadonlySet<string> {
  if (typeof root !== 'object' || root === null || Array.isArray(root)) return new Set();
  const o = root as Record<string, unknown>;
  const name = NAME_FIELDS.map((f) => o[f]).find((v) => v !== undefined && v !== null);
  const dataField = DATA_FIELDS.find((f) => o[f] !== undefined && o[f] !== null);
  if (!isEventName(name) || dataField === undefined) return new Set();
  return new Set((THING_OBJECTS[name] ?? []).map((p) => (p === '' ? dataField : `${dataField}.${p}`)));
}

export function createRedactor(opts: { salt?: string } = {}): Redactor {
  const salt = opts.salt ?? '';
  const hash = (kind: string, original: string): Buffer => createHash('sha256').update(`${salt}\u0000${kind}\u0000${original}`).digest();
  const fakeName = (original: string): string => {
    const h = hash('name', original.trim().toLowerCase());
    // Keep single-word names single-word (a first name stays a first name).
    const first = FIRST[(h[0] as number) % FIRST.length] as string;
    return /\s/.test(original.trim()) ? `${first} ${LAST[(h[1] as number) % LAST.length]}` : first;
  };
  const fakeEmail = (original: string): string => {
    const h = hash('email', original.trim().toLowerCase());
    return `${(FIRST[(h[0] as number) % FIRST.length] as string).toLowerCase()}.${h.toString('hex').slice(2, 8)}@example.com`;
  };
  const fakePhone = (original: string): string => {
    const h = hash('phone', original.replace(/\D/g, ''));
    const digits = String(h.readUInt32BE(0) % 10_000_000).padStart(7, '0');
    return `+1 555 ${digits.slice(0, 3)} ${digits.slice(3)}`;
  };
  const fakeBody = (original: string): string => `Redacted message ${hash('body', original).toString('hex').slice(0, 8)}`;
  // Only what looks like an email or a phone number (src/pii/mask.ts): ids, timestamps and addresses stay.
  const text = (s: string): string => replacePhones(replaceEmails(s, fakeEmail), fakePhone);

  /** `path`: dotted keys from the root to `v`; `parent`: the key of the object holding `v`. */
  const walk = (v: unknown, key: string | null, parent: string | null, path: string, things: ReadonlySet<string>): unknown => {
    if (typeof v === 'string') {
      if (key !== null && v !== '') {
        if (EMAIL_KEYS.has(key)) return fakeEmail(v);
        if (PHONE_KEYS.has(key)) return fakePhone(v);
        if (PERSON_NAME_KEYS.has(key)) return fakeName(v);
        if (key === 'name') {
          const objectPath = path.slice(0, Math.max(0, path.lastIndexOf('.')));
          const thing = (parent !== null && THING_PARENTS.test(parent)) || things.has(objectPath);
          return thing ? text(v) : fakeName(v);
        }
        if (BODY_KEYS.has(key)) return fakeBody(v);
      }
      return text(v);
    }
    if (Array.isArray(v)) return v.map((x) => walk(x, key, parent, path, things));
    if (typeof v === 'object' && v !== null) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = walk(x, k, key, path === '' ? k : `${path}.${k}`, things);
      return out;
    }
    return v;
  };
  const redact = (root: unknown): unknown => walk(root, null, null, '', thingPaths(root));

  return {
    value: redact,
    body(bytes) {
      const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const utf8 = buf.toString('utf8');
      // Bodies that are not UTF-8 (Latin-1) are redacted as Latin-1 and stay Latin-1.
      const encoding: BufferEncoding = Buffer.from(utf8, 'utf8').equals(buf) ? 'utf8' : 'latin1';
      const source = encoding === 'utf8' ? utf8 : buf.toString('latin1');
      let json: unknown;
      try {
        json = JSON.parse(source);
      } catch {
        return Buffer.from(text(source), encoding);
      }
      // Re-serialised: pretty-printed bodies stay pretty-printed (2 spaces), compact ones compact.
      const indent = /\n/.test(source.trim()) ? 2 : undefined;
      return Buffer.from(JSON.stringify(redact(json), null, indent), encoding);
    },
  };
}
