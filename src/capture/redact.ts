import { createHash } from 'node:crypto';

/**
 * Redaction of captured bodies, so captures become shareable fixtures.
 * Names, emails, phone numbers and message bodies are replaced by stable
 * fakes: the same original always yields the same fake (so a contact stays one
 * contact across a capture set and replays keep their relations), and the
 * result is still valid JSON of the same shape, so it still validates.
 * Fakes derive from a SHA-256 of (salt, kind, original); set a salt when the
 * originals are guessable (phone numbers) and the captures leave your team.
 */
export interface Redactor {
  /** Redacts a raw body; a body that is not JSON has its emails and phone numbers replaced. */
  body(bytes: Uint8Array): Buffer;
  /** Redacts one JSON value (already parsed). */
  value(v: unknown): unknown;
}

const FIRST = ['Alex', 'Sam', 'Robin', 'Kim', 'Jordan', 'Taylor', 'Casey', 'Morgan', 'Jamie', 'Riley', 'Avery', 'Quinn', 'Charlie', 'Drew', 'Emery', 'Finley'];
const LAST = ['Smith', 'Jones', 'Garcia', 'Müller', 'Rossi', 'Dubois', 'Silva', 'Novak', 'Berg', 'Kowalski', 'Tanaka', 'Okafor', 'Larsen', 'Costa', 'Evans', 'Moreau'];

const NAME_KEYS = new Set(['name', 'first_name', 'last_name', 'full_name', 'display_name', 'contact_name', 'username', 'nickname']);
const EMAIL_KEYS = new Set(['email', 'email_address']);
const PHONE_KEYS = new Set(['phone', 'phone_number', 'mobile', 'whatsapp', 'wa_id', 'msisdn']);
const BODY_KEYS = new Set(['body', 'text', 'caption', 'message', 'content', 'note', 'snippet', 'preview', 'last_message', 'subject', 'title', 'description']);
/** `name` inside these objects names a thing, not a person (a stage, a channel, a label): kept. */
const THING_PARENTS = /stage|channel|label|categor|product|pipeline|tag|team|company|source|workspace|template|segment/i;

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;
/** A `+` international number, or 9+ digits grouped by spaces, dots or dashes. */
const PHONE = /\+\d[\d ().-]{6,}\d|\b\d{3}[ .-]?\d{3}[ .-]?\d{3,4}\b/g;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+)?(Z|[+-]\d{2}:?\d{2})?$/;

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
  const text = (s: string): string => (TIMESTAMP.test(s) ? s : s.replace(EMAIL, fakeEmail).replace(PHONE, fakePhone));

  const walk = (v: unknown, key: string | null, parent: string | null): unknown => {
    if (typeof v === 'string') {
      if (key !== null) {
        if (EMAIL_KEYS.has(key)) return v === '' ? v : fakeEmail(v);
        if (PHONE_KEYS.has(key)) return v === '' ? v : fakePhone(v);
        if (NAME_KEYS.has(key) && !(parent !== null && THING_PARENTS.test(parent))) return v === '' ? v : fakeName(v);
        if (BODY_KEYS.has(key)) return v === '' ? v : fakeBody(v);
      }
      return text(v);
    }
    if (Array.isArray(v)) return v.map((x) => walk(x, key, parent));
    if (typeof v === 'object' && v !== null) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = walk(x, k, key);
      return out;
    }
    return v;
  };

  return {
    value: (v) => walk(v, null, null),
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
      return Buffer.from(JSON.stringify(walk(json, null, null), null, indent), encoding);
    },
  };
}
