import { z } from 'zod';
import { Contact, LabelRef, LifecycleStage } from '../spec/schemas/index.js';
import {
  data,
  found,
  foundList,
  int,
  notFound,
  nullable,
  overlay,
  refId,
  refText,
  str,
  unprocessable,
  type Body,
  type DryEnv,
  type DryRoute,
} from './dry-kit.js';

/** Path of a contact address: `/contacts/36` for `36` and `id:36`, the email lower-cased for `email:`. */
export function contactPath(ref: string): string {
  const id = refId(ref);
  if (id !== undefined) return `/contacts/${id}`;
  return ref.startsWith('email:') ? `/contacts/${ref.toLowerCase()}` : `/contacts/${ref}`;
}

/** Keeps a contact under its id and its email address (null: deleted). */
function rememberContact(env: DryEnv, c: Contact, deleted = false): void {
  env.remember(`/contacts/${c.id}`, deleted ? null : c);
  if (c.email) env.remember(`/contacts/email:${c.email.toLowerCase()}`, deleted ? null : c);
}

/** The writable fields of a contact body that were sent. */
const contactFields = (b: Body) => ({
  name: str(b['name']),
  email: nullable(b, 'email', str),
  phone: nullable(b, 'phone', str),
  lifecycle_stage_id: nullable(b, 'lifecycle_stage_id', int),
});

/** A contact that exists only in this run (or whose record could not be read), from the body. */
function newContact(id: number, b: Body, env: DryEnv, address?: string): Contact {
  const at = env.now();
  const c: Contact = { id, name: '', phone: null, email: null, lifecycle_stage_id: null, blocked: false, created_at: at, updated_at: at };
  if (address?.startsWith('email:')) c.email = address.slice(6);
  if (address?.startsWith('phone:')) c.phone = address.slice(6);
  return overlay(c, contactFields(b));
}

/** PATCH and PUT of a contact: the current record with the fields sent; PUT at an unknown email/phone address creates. */
async function changeContact(ref: string, b: Body, env: DryEnv, put: boolean) {
  const l = await env.read(contactPath(ref));
  const id = refId(ref);
  if (l.status === 404) {
    if (!put || id !== undefined) return notFound(l);
    const c = newContact(env.nextId(), b, env, ref);
    rememberContact(env, c);
    return data(201, c);
  }
  const cur = found(l, Contact) ?? newContact(id ?? env.nextId(), {}, env, ref);
  const c = overlay(cur, { ...contactFields(b), updated_at: env.now() });
  rememberContact(env, c);
  return data(200, c);
}

/** A stage held by a contact on the stage `stage` (id or exact name), found by a read search, else undefined. */
async function stageNamed(stage: string | number, env: DryEnv): Promise<LifecycleStage | undefined> {
  const l = await env.read('/contacts/search', {
    query: { include: 'lifecycle' },
    body: { match: [[{ attribute: 'lifecycle_stage', operator: 'is', value: stage }]], per_page: 1 },
  });
  const s = foundList(l, z.looseObject({ lifecycle: LifecycleStage }))?.[0]?.lifecycle;
  return s && (s.id === stage || s.name === stage) ? s : undefined;
}

const WithStage = Contact.extend({ lifecycle: LifecycleStage.optional() });

/** `PUT /contacts/{ref}/lifecycle`: `previous` is the stage held (null when it is the one asked for). */
async function moveLifecycle(ref: string, b: Body, env: DryEnv) {
  const l = await env.read(contactPath(ref), { query: { include: 'lifecycle' } });
  if (l.status === 404) return notFound(l);
  const cur = found(l, WithStage);
  const stage = typeof b['stage'] === 'number' ? b['stage'] : refText(b['stage']);
  const held =
    cur?.lifecycle ?? (cur?.lifecycle_stage_id != null ? { id: cur.lifecycle_stage_id, name: '', role: null, outcome: null } : null);
  const contactId = cur?.id ?? refId(ref) ?? env.nextId();
  if (held && (held.id === stage || (held.name !== '' && held.name === stage)))
    return data(200, { contact_id: contactId, previous: null, lifecycle: held });
  const lifecycle = (await stageNamed(stage, env)) ?? {
    id: typeof stage === 'number' ? stage : env.nextId(),
    name: typeof stage === 'string' ? stage : '',
    role: null,
    outcome: null,
  };
  if (cur) {
    const { lifecycle: _held, ...rest } = cur;
    rememberContact(env, { ...rest, lifecycle_stage_id: lifecycle.id, updated_at: env.now() });
  }
  return data(200, { contact_id: contactId, previous: held, lifecycle });
}

/** The contact's labels (404 passed on), changed by `change`. */
async function changeLabels(ref: string, env: DryEnv, change: (labels: LabelRef[]) => LabelRef[]) {
  const path = `${contactPath(ref)}/labels`;
  const l = await env.read(path);
  if (l.status === 404) return notFound(l);
  const labels = change(foundList(l, LabelRef) ?? []);
  env.remember(path, labels);
  return data(200, labels);
}

const sameLabel = (l: LabelRef, ref: string | number): boolean =>
  typeof ref === 'number' ? l.id === ref : l.name === ref || String(l.id) === ref;

/** Answers of the contact writes. */
export const CONTACT_ROUTES: readonly DryRoute[] = [
  {
    method: 'POST',
    pattern: '/contacts',
    op: 'contacts.create',
    async answer(_p, b, env) {
      const c = newContact(env.nextId(), b, env);
      rememberContact(env, c);
      return data(201, c);
    },
  },
  { method: 'PATCH', pattern: '/contacts/:ref', op: 'contacts.update', answer: ([ref = ''], b, env) => changeContact(ref, b, env, false) },
  { method: 'PUT', pattern: '/contacts/:ref', op: 'contacts.upsert', answer: ([ref = ''], b, env) => changeContact(ref, b, env, true) },
  {
    method: 'DELETE',
    pattern: '/contacts/:ref',
    op: 'contacts.delete',
    async answer([ref = ''], _b, env) {
      const l = await env.read(contactPath(ref));
      if (l.status === 404) return notFound(l);
      const cur = found(l, Contact);
      if (cur) rememberContact(env, cur, true);
      else env.remember(contactPath(ref), null);
      return { status: 204 };
    },
  },
  {
    method: 'POST',
    pattern: '/contacts/merge',
    op: 'contacts.merge',
    async answer(_p, b, env) {
      const [survivor, loser] = [refText(b['survivor']), refText(b['loser'])];
      const [s, l] = [await env.read(contactPath(survivor)), await env.read(contactPath(loser))];
      if (s.status === 404) return unprocessable('survivor', 'no such contact');
      if (l.status === 404) return unprocessable('loser', 'no such contact');
      const win = found(s, Contact) ?? newContact(refId(survivor) ?? env.nextId(), {}, env, survivor);
      const lose = found(l, Contact);
      // The survivor's values win; its gaps are filled from the loser.
      const merged = { ...win, email: win.email ?? lose?.email ?? null, phone: win.phone ?? lose?.phone ?? null, updated_at: env.now() };
      if (lose) rememberContact(env, lose, true);
      rememberContact(env, merged);
      return data(200, merged);
    },
  },
  {
    method: 'PUT',
    pattern: '/contacts/:ref/lifecycle',
    op: 'contacts.setLifecycle',
    answer: ([ref = ''], b, env) => moveLifecycle(ref, b, env),
  },
  {
    method: 'POST',
    pattern: '/contacts/:ref/labels',
    op: 'contacts.labels.add',
    answer: ([ref = ''], b, env) =>
      changeLabels(ref, env, (labels) => {
        const out = [...labels];
        const asked = Array.isArray(b['labels']) ? (b['labels'] as unknown[]) : [];
        for (const a of asked) {
          if (typeof a !== 'string' && typeof a !== 'number') continue;
          if (out.some((l) => sameLabel(l, a))) continue;
          out.push(typeof a === 'number' ? { id: a, name: '' } : { id: env.nextId(), name: a });
        }
        return out;
      }),
  },
  {
    method: 'DELETE',
    pattern: '/contacts/:ref/labels/:label',
    op: 'contacts.labels.remove',
    answer: ([ref = '', label = ''], _b, env) => changeLabels(ref, env, (labels) => labels.filter((l) => !sameLabel(l, label))),
  },
];
