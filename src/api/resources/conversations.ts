import type { Paginator, PageQuery } from '../pagination.js';
import type { ApiPromise } from '../response.js';
import {
  ASSIGNEE_TYPES,
  CONVERSATION_PRIORITIES,
  CONVERSATION_STATUSES,
  type AssigneeType,
  type ConversationPriority,
  MAX_CHARS,
} from '../../spec/index.js';
import { ClosingNote, Conversation, type ConversationStatus } from '../../spec/schemas/index.js';
import type { RequestOptions, WriteOptions } from '../transport.js';
import { TIMESTAMP_FORM } from '../dates.js';
import { check } from '../validate.js';
import { contactRefPath, type ContactRef } from './contacts.js';
import { all, idPath, iso, listing, one, paged, type ResourceContext } from './shared.js';

export interface ConversationListQuery extends PageQuery {
  status?: ConversationStatus;
  contact_id?: number;
  channel_id?: number;
}

/** Fields of `PATCH /conversations/{id}` that go with any status change (or none). */
interface ConversationPatchCommon {
  /** Free text, at most 2000 characters. */
  summary?: string | null;
  /** `{type: 'user' | 'ai', id}`; null unassigns. An `ai` assignee answers a waiting customer at once. */
  assignee?: { type: AssigneeType; id: number } | null;
  /** Routes to a team queue; null clears it. */
  team_id?: number | null;
  priority?: ConversationPriority;
}

/**
 * Body of `PATCH /conversations/{id}`; only keys sent are acted on. A union on
 * `status`: `category` only with `closed`, `snoozed_until` required with `snoozed`.
 */
export type ConversationPatch = ConversationPatchCommon &
  (
    | { status?: undefined; category?: undefined; snoozed_until?: undefined }
    | { status: 'open' | 'pending'; category?: undefined; snoozed_until?: undefined }
    | { status: 'closed'; /** One of the categories of `closingNotes()`. */ category?: string | null; snoozed_until?: undefined }
    | { status: 'snoozed'; /** Must be in the future. */ snoozed_until: string | Date; category?: undefined }
  );

export function conversationsResource(ctx: ResourceContext) {
  const { transport: t } = ctx;
  const path = (op: string, id: number): string => `/conversations/${idPath(op, 'id', id)}`;

  const update = (id: number, patch: ConversationPatch, options?: WriteOptions): ApiPromise<Conversation> => {
    const op = 'conversations.update';
    const c = check(op)
      .oneOf('status', patch.status, CONVERSATION_STATUSES)
      .maxLen('summary', patch.summary, MAX_CHARS.conversationSummary)
      .oneOf('priority', patch.priority, CONVERSATION_PRIORITIES)
      .int('team_id', patch.team_id, 1);
    if (patch.assignee) {
      c.oneOf('assignee.type', patch.assignee.type, ASSIGNEE_TYPES).int('assignee.id', patch.assignee.id, 1);
    }
    if (patch.category !== undefined && patch.category !== null && patch.status !== 'closed') c.fail('category', 'only with status closed');
    if (patch.snoozed_until !== undefined && patch.status !== 'snoozed') c.fail('snoozed_until', 'only with status snoozed');
    let body: Record<string, unknown> = { ...patch };
    if (patch.status === 'snoozed') {
      c.present('snoozed_until', patch.snoozed_until, `${TIMESTAMP_FORM}, with status snoozed`).timestamp(
        'snoozed_until',
        patch.snoozed_until,
      );
      const until = iso(patch.snoozed_until);
      // A checked timestamp carries its offset, so Date.parse reads it exactly.
      if (Date.parse(String(until)) <= ctx.now()) c.fail('snoozed_until', 'a time in the future');
      body = { ...body, snoozed_until: until };
    }
    return t.request({ op, method: 'PATCH', path: path(op, id), body, schema: one(Conversation), repeat: 'ik', options });
  };

  return {
    /** `GET /conversations`. */
    list(query: ConversationListQuery = {}, options?: RequestOptions): Paginator<Conversation> {
      check('conversations.list').oneOf('status', query.status, CONVERSATION_STATUSES);
      return listing(ctx, 'conversations.list', '/conversations', paged(Conversation), { ...query }, options);
    },
    /** `GET /conversations/{id}`. */
    get(id: number, options?: RequestOptions): ApiPromise<Conversation> {
      return t.request({
        op: 'conversations.get',
        method: 'GET',
        path: path('conversations.get', id),
        schema: one(Conversation),
        repeat: 'safe',
        options,
      });
    },
    /**
     * `POST /conversations` (IK): opens a thread, or returns the contact's live thread
     * on that channel (`.withResponse()` status 201 new, 200 existing).
     */
    open(body: { contact: ContactRef; channel_id: number }, options?: WriteOptions): ApiPromise<Conversation> {
      const op = 'conversations.open';
      check(op)
        .present('contact', body.contact, 'an id or identifier')
        .present('channel_id', body.channel_id, 'a channel id')
        .int('channel_id', body.channel_id, 1);
      contactRefPath(op, body.contact);
      return t.request({ op, method: 'POST', path: '/conversations', body, schema: one(Conversation), repeat: 'ik', options });
    },
    /** `PATCH /conversations/{id}` (IK). See {@link ConversationPatch}. */
    update,
    /** Closes the thread (optional closing-note `category`, optional `summary`). */
    close(id: number, extra: { category?: string | null; summary?: string | null } = {}, options?: WriteOptions): ApiPromise<Conversation> {
      return update(id, { status: 'closed', ...extra }, options);
    },
    /** Snoozes the thread until a future time. */
    snooze(id: number, until: string | Date, options?: WriteOptions): ApiPromise<Conversation> {
      return update(id, { status: 'snoozed', snoozed_until: until }, options);
    },
    /** Assigns to a teammate or the AI agent; null unassigns. */
    assign(id: number, assignee: { type: AssigneeType; id: number } | null, options?: WriteOptions): ApiPromise<Conversation> {
      return update(id, { assignee }, options);
    },
    /** `GET /closing-notes`: the categories allowed when closing, in the workspace's order. */
    closingNotes(options?: RequestOptions): ApiPromise<ClosingNote[]> {
      return t.request({
        op: 'conversations.closingNotes',
        method: 'GET',
        path: '/closing-notes',
        schema: all(ClosingNote),
        repeat: 'safe',
        options,
      });
    },
  };
}

export type ConversationsResource = ReturnType<typeof conversationsResource>;
