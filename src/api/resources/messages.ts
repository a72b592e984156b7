import type { Paginator, PageQuery } from '../pagination.js';
import type { ApiPromise } from '../response.js';
import { OUTGOING_MESSAGE_TYPES, MAX_CHARS } from '../../spec/index.js';
import { Message } from '../../spec/schemas/index.js';
import type { RequestOptions, WriteOptions } from '../transport.js';
import { check, type Check } from '../validate.js';
import { idPath, listing, one, paged, type ResourceContext } from './shared.js';

interface Common {
  /** Required on a public comment thread: the id of the inbound comment answered (only text may be published there). At most 255. */
  reply_to?: string | null;
}
/** A text message: `text` at most 4096 characters. */
export interface TextMessage extends Common {
  type: 'text';
  text: string;
}
/** A file fetched by the service from a public http(s) URL (at most 2048 characters; file up to 25 MB). */
export interface AttachmentMessage extends Common {
  type: 'attachment';
  url: string;
  caption?: string | null;
  file_name?: string | null;
}
/** An approved template of the thread's channel: the only kind accepted outside the 24-hour window. */
export interface TemplateMessage extends Common {
  type: 'template';
  template: string;
  language?: string | null;
  parameters?: string[];
}
/** A prompt with 1–10 unique buttons (each at most 100 characters). */
export interface ButtonsMessage extends Common {
  type: 'buttons';
  text: string;
  buttons: string[];
}

/** Body of `POST /conversations/{id}/messages`. */
export type OutgoingMessage = TextMessage | AttachmentMessage | TemplateMessage | ButtonsMessage;

/** Body of `POST /conversations/{id}/notes`. */
export interface NoteCreate {
  /** At most 4096 characters; the contact never sees it. */
  body: string;
  /** Active teammate ids to notify. */
  mentions?: number[];
}

/** The fields each kind takes besides `type` and `reply_to` (spec: POST /conversations/{id}/messages body). */
const FIELDS_OF: Record<OutgoingMessage['type'], readonly string[]> = {
  text: ['text'],
  buttons: ['text', 'buttons'],
  attachment: ['url', 'caption', 'file_name'],
  template: ['template', 'language', 'parameters'],
};

/**
 * `type` is required and says which fields the message has: `body` (the
 * service's shorthand for a text sent without a type) or a field of another
 * kind is refused rather than sent to be dropped.
 */
function checkShape(c: Check, m: OutgoingMessage): void {
  c.present('type', m.type, `one of ${OUTGOING_MESSAGE_TYPES.join(', ')}`).oneOf('type', m.type, OUTGOING_MESSAGE_TYPES);
  const own = FIELDS_OF[m.type];
  for (const [field, value] of Object.entries(m)) {
    if (field === 'type' || field === 'reply_to' || value === undefined || value === null || own.includes(field)) continue;
    if (field === 'body') c.fail('body', `not sent with a type: the text of a ${m.type} message goes in text`);
    c.fail(field, `not a field of a ${m.type} message (it takes ${own.join(', ')}, reply_to)`);
  }
}

function checkMessage(c: Check, m: OutgoingMessage): void {
  checkShape(c, m);
  c.maxLen('reply_to', m.reply_to, MAX_CHARS.replyTo);
  switch (m.type) {
    case 'text':
      c.required('text', m.text, MAX_CHARS.messageText);
      break;
    case 'buttons':
      c.required('text', m.text, MAX_CHARS.messageText).buttons('buttons', m.buttons);
      break;
    case 'attachment':
      c.required('url', m.url, MAX_CHARS.attachmentUrl)
        .maxLen('caption', m.caption, MAX_CHARS.caption)
        .maxLen('file_name', m.file_name, MAX_CHARS.fileName);
      if (!/^https?:\/\//i.test(m.url)) c.fail('url', 'a public http(s) URL');
      break;
    case 'template':
      c.required('template', m.template, MAX_CHARS.templateName);
      if (m.parameters !== undefined && (!Array.isArray(m.parameters) || m.parameters.some((p) => typeof p !== 'string'))) {
        c.fail('parameters', 'an array of strings');
      }
      break;
  }
}

export function messagesResource(ctx: ResourceContext) {
  const { transport: t } = ctx;
  const conv = (op: string, id: number): string => `/conversations/${idPath(op, 'conversationId', id)}`;

  const send = (conversationId: number, message: OutgoingMessage, options?: WriteOptions): ApiPromise<Message> => {
    const op = 'messages.send';
    checkMessage(check(op), message);
    return t.request({
      op,
      method: 'POST',
      path: `${conv(op, conversationId)}/messages`,
      body: message,
      schema: one(Message),
      repeat: 'ik',
      options,
    });
  };
  type Extra<M> = Omit<M, 'type'>;

  return {
    /** `GET /conversations/{id}/messages`, newest first. */
    list(conversationId: number, query: PageQuery = {}, options?: RequestOptions): Paginator<Message> {
      return listing(ctx, 'messages.list', `${conv('messages.list', conversationId)}/messages`, paged(Message), { ...query }, options);
    },
    /** `GET /messages/{id}` (e.g. the message of a `message.*` event). */
    get(id: number, options?: RequestOptions): ApiPromise<Message> {
      return t.request({
        op: 'messages.get',
        method: 'GET',
        path: `/messages/${idPath('messages.get', 'id', id)}`,
        schema: one(Message),
        repeat: 'safe',
        options,
      });
    },
    /**
     * `POST /conversations/{id}/messages` (IK): a real send on the thread's channel.
     * Pass `{ idempotencyKey }` to make a repeated call a replay instead of a second send.
     */
    send,
    /** Sends a text message. */
    sendText(
      conversationId: number,
      text: string,
      extra: Omit<Extra<TextMessage>, 'text'> = {},
      options?: WriteOptions,
    ): ApiPromise<Message> {
      return send(conversationId, { type: 'text', text, ...extra }, options);
    },
    /** Sends a file by URL. */
    sendAttachment(conversationId: number, attachment: Extra<AttachmentMessage>, options?: WriteOptions): ApiPromise<Message> {
      return send(conversationId, { type: 'attachment', ...attachment }, options);
    },
    /** Sends an approved template. */
    sendTemplate(conversationId: number, template: Extra<TemplateMessage>, options?: WriteOptions): ApiPromise<Message> {
      return send(conversationId, { type: 'template', ...template }, options);
    },
    /** Sends a prompt with buttons. */
    sendButtons(
      conversationId: number,
      text: string,
      buttons: string[],
      extra: Omit<Extra<ButtonsMessage>, 'text' | 'buttons'> = {},
      options?: WriteOptions,
    ): ApiPromise<Message> {
      return send(conversationId, { type: 'buttons', text, buttons, ...extra }, options);
    },
  };
}

export function notesResource(ctx: ResourceContext) {
  return {
    /** `POST /conversations/{id}/notes` (IK): an internal note (type `note`); mentioned teammates are notified. */
    create(conversationId: number, note: NoteCreate, options?: WriteOptions): ApiPromise<Message> {
      const op = 'notes.create';
      const c = check(op).required('body', note.body, MAX_CHARS.noteBody);
      note.mentions?.forEach((m, i) => c.int(`mentions.${i}`, m, 1));
      return ctx.transport.request({
        op,
        method: 'POST',
        path: `/conversations/${idPath(op, 'conversationId', conversationId)}/notes`,
        body: note,
        schema: one(Message),
        repeat: 'ik',
        options,
      });
    },
  };
}

export type MessagesResource = ReturnType<typeof messagesResource>;
export type NotesResource = ReturnType<typeof notesResource>;
