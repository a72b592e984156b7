import { Paginator, type PageQuery } from '../pagination.js';
import type { ApiPromise } from '../response.js';
import { Contact, ContactLifecycle } from '../../spec/schemas/index.js';
import { MAX_CHARS, type SegmentRule } from '../../spec/index.js';
import type { RequestOptions, WriteOptions } from '../transport.js';
import { check } from '../validate.js';
import { contactLabels } from './contact-labels.js';
import { contactPath, contactRefPath, type ContactRef } from './contact-ref.js';
import { iso, listing, one, paged, type ResourceContext } from './shared.js';

export { contactRefPath, type ContactRef } from './contact-ref.js';

/** Extra blocks `include` adds to each contact (their shape is not fixed by the spec). */
export type ContactInclude = 'labels' | 'lifecycle';

/** Filters of `GET /contacts`; every filter sent must match. */
export interface ContactListQuery extends PageQuery {
  /** Name and email (and phone with the view-phone permission). */
  search?: string;
  /** Exact address, case-insensitive. */
  email?: string;
  /** Any spelling, matched on its last nine digits; needs the view-phone permission. */
  phone?: string;
  /** Label id or exact name. */
  label?: string | number;
  lifecycle_stage_id?: number;
  created_after?: string | Date;
  created_before?: string | Date;
  /** Changed at or after (for polling). */
  updated_after?: string | Date;
  include?: readonly ContactInclude[];
}

/** Body of `POST /contacts`. */
export interface ContactCreate {
  /** Required, at most 255 characters. */
  name: string;
  email?: string | null;
  /** At most 32 characters; needs the view-phone permission. */
  phone?: string | null;
  lifecycle_stage_id?: number | null;
}
/** Body of `PATCH`/`PUT /contacts/{id}`: only the fields sent change. */
export type ContactPatch = Partial<ContactCreate>;

/** Body of `POST /contacts/search`. */
export interface ContactSearch {
  search?: string | null;
  /** Groups of rules: rules in a group are ANDed, groups are ORed; no rules matches everyone. */
  match?: SegmentRule[][];
  /** A saved segment; takes precedence over `match`. */
  segment_id?: number | null;
  /** 1 to 100. */
  per_page?: number;
  cursor?: string;
  include?: readonly ContactInclude[];
}

function checkContactBody(op: string, body: ContactPatch, requireName: boolean): void {
  const c = check(op);
  if (requireName) c.required('name', body.name, MAX_CHARS.contactName);
  else c.maxLen('name', body.name, MAX_CHARS.contactName);
  if (!requireName && body.name !== undefined && (body.name === null || body.name.trim() === ''))
    c.fail('name', `a non-empty string of at most ${MAX_CHARS.contactName} characters`);
  c.maxLen('phone', body.phone, MAX_CHARS.contactPhone).email('email', body.email).int('lifecycle_stage_id', body.lifecycle_stage_id, 1);
}

const include = (i: readonly ContactInclude[] | undefined): string | undefined => (i && i.length ? i.join(',') : undefined);

export function contactsResource(ctx: ResourceContext) {
  return { ...contactReads(ctx), ...contactWrites(ctx), labels: contactLabels(ctx) };
}

/** `GET /contacts`, `GET /contacts/{ref}` and `POST /contacts/search`. */
function contactReads(ctx: ResourceContext) {
  const { transport: t } = ctx;
  return {
    /** `GET /contacts`: iterate contacts (newest first) or `.pages()`. */
    list(query: ContactListQuery = {}, options?: RequestOptions): Paginator<Contact> {
      const { include: inc, created_after, created_before, updated_after, ...rest } = query;
      check('contacts.list')
        .dateOrTimestamp('created_after', created_after)
        .dateOrTimestamp('created_before', created_before)
        .dateOrTimestamp('updated_after', updated_after);
      return listing(
        ctx,
        'contacts.list',
        '/contacts',
        paged(Contact),
        {
          ...rest,
          include: include(inc),
          created_after: iso(created_after),
          created_before: iso(created_before),
          updated_after: iso(updated_after),
        },
        options,
      );
    },
    /** `GET /contacts/{ref}`; 404 → NotFoundError. */
    get(ref: ContactRef, opts: { include?: readonly ContactInclude[] } & RequestOptions = {}): ApiPromise<Contact> {
      const { include: inc, ...options } = opts;
      return t.request({
        op: 'contacts.get',
        method: 'GET',
        path: contactPath('contacts.get', ref),
        query: { include: include(inc) },
        schema: one(Contact),
        repeat: 'safe',
        options,
      });
    },
    /**
     * `POST /contacts/search` (a read: no Idempotency-Key, safe to retry).
     *
     * @example
     * api.contacts.search({ match: [[{ attribute: 'label', operator: 'has', value: 'vip' }, { attribute: 'email', operator: 'set' }]] })
     */
    search(body: ContactSearch = {}, options?: RequestOptions): Paginator<Contact> {
      const op = 'contacts.search';
      const { include: inc, cursor, ...rest } = body;
      check(op).perPage(rest.per_page).segmentRules('match', rest.match).int('segment_id', rest.segment_id, 1);
      const schema = paged(Contact);
      return new Paginator<Contact>(
        (c) =>
          t.request({
            op,
            method: 'POST',
            path: '/contacts/search',
            query: { include: include(inc), cursor: c },
            body: rest,
            schema,
            repeat: 'safe',
            options,
          }),
        cursor,
      );
    },
  };
}

/** The writes: create, update, upsert, delete, merge and the lifecycle stage. */
function contactWrites({ transport: t }: ResourceContext) {
  return {
    /** `POST /contacts` (IK): 201 with the new contact. */
    create(body: ContactCreate, options?: WriteOptions): ApiPromise<Contact> {
      checkContactBody('contacts.create', body, true);
      return t.request({ op: 'contacts.create', method: 'POST', path: '/contacts', body, schema: one(Contact), repeat: 'ik', options });
    },
    /** `PATCH /contacts/{ref}` (IK): only the fields sent change. */
    update(ref: ContactRef, body: ContactPatch, options?: WriteOptions): ApiPromise<Contact> {
      checkContactBody('contacts.update', body, false);
      return t.request({
        op: 'contacts.update',
        method: 'PATCH',
        path: contactPath('contacts.update', ref),
        body,
        schema: one(Contact),
        repeat: 'ik',
        options,
      });
    },
    /**
     * `PUT /contacts/{ref}` (IK): make the contact at the address match the body,
     * creating it when none exists (`.withResponse()` status 201) — except `id:` refs, which never create (404).
     */
    upsert(ref: ContactRef, body: ContactPatch, options?: WriteOptions): ApiPromise<Contact> {
      checkContactBody('contacts.upsert', body, false);
      return t.request({
        op: 'contacts.upsert',
        method: 'PUT',
        path: contactPath('contacts.upsert', ref),
        body,
        schema: one(Contact),
        repeat: 'ik',
        options,
      });
    },
    /** `DELETE /contacts/{ref}`: 204; the contact's conversations stay. */
    delete(ref: ContactRef, options?: RequestOptions): ApiPromise<void> {
      return t.request<void>({
        op: 'contacts.delete',
        method: 'DELETE',
        path: contactPath('contacts.delete', ref),
        repeat: 'safe',
        options,
      });
    },
    /** `POST /contacts/merge` (IK): the loser's records move to the survivor, which is returned. */
    merge(body: { survivor: ContactRef; loser: ContactRef }, options?: WriteOptions): ApiPromise<Contact> {
      const op = 'contacts.merge';
      check(op).present('survivor', body.survivor, 'an id or identifier').present('loser', body.loser, 'an id or identifier');
      contactRefPath(op, body.survivor, 'survivor');
      contactRefPath(op, body.loser, 'loser');
      return t.request({ op, method: 'POST', path: '/contacts/merge', body, schema: one(Contact), repeat: 'ik', options });
    },
    /** `PUT /contacts/{ref}/lifecycle` (IK): `stage` is a stage id or exact name; `previous` is null when nothing changed. */
    setLifecycle(ref: ContactRef, stage: string | number, options?: WriteOptions): ApiPromise<ContactLifecycle> {
      const op = 'contacts.setLifecycle';
      if (typeof stage === 'string') check(op).required('stage', stage, 255);
      else check(op).int('stage', stage, 1);
      return t.request({
        op,
        method: 'PUT',
        path: `${contactPath(op, ref)}/lifecycle`,
        body: { stage },
        schema: one(ContactLifecycle),
        repeat: 'ik',
        options,
      });
    },
  };
}

export type ContactsResource = ReturnType<typeof contactsResource>;
