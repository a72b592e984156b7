import { z } from 'zod';
import { OUTGOING_MESSAGE_TYPES, BUTTONS, MAX_CHARS } from '../../spec/index.js';
import { strictBody, tooLong } from '../validation.js';
import { invalid } from '../errors.js';
import { checkAttachmentUrl } from './attachment-url.js';
import type { Channel, Conversation, Workspace } from '../types.js';

/** Spec, POST /conversations/{id}/messages body and the Limits table. */
export const SendBody = strictBody({
  type: z.enum(OUTGOING_MESSAGE_TYPES).optional(),
  body: z.string().max(MAX_CHARS.messageText, tooLong(MAX_CHARS.messageText)).optional(),
  text: z.string().max(MAX_CHARS.messageText, tooLong(MAX_CHARS.messageText)).nullable().optional(),
  reply_to: z.string().max(MAX_CHARS.replyTo, tooLong(MAX_CHARS.replyTo)).nullable().optional(),
  url: z.string().max(MAX_CHARS.attachmentUrl, tooLong(MAX_CHARS.attachmentUrl)).optional(),
  caption: z.string().max(MAX_CHARS.caption, tooLong(MAX_CHARS.caption)).nullable().optional(),
  file_name: z.string().max(MAX_CHARS.fileName, tooLong(MAX_CHARS.fileName)).nullable().optional(),
  buttons: z
    .array(z.string().min(1).max(MAX_CHARS.button, tooLong(MAX_CHARS.button)))
    .min(BUTTONS.min, `needs ${BUTTONS.min} to ${BUTTONS.max} buttons`)
    .max(BUTTONS.max, `needs ${BUTTONS.min} to ${BUTTONS.max} buttons`)
    .refine((b) => new Set(b).size === b.length, 'button labels must be unique')
    .optional(),
  template: z.string().max(MAX_CHARS.templateName, tooLong(MAX_CHARS.templateName)).optional(),
  language: z.string().nullable().optional(),
  parameters: z.array(z.string()).optional(),
}).superRefine((b, ctx) => {
  const issue = (field: string, message: string): void => {
    ctx.addIssue({ code: 'custom', path: [field], message });
  };
  if (b.type === undefined) return shorthand(b, issue);
  if (b.body !== undefined) issue('body', `is only the shorthand {body} without type; with type "${b.type}" send text`);
  for (const field of Object.keys(b) as (keyof typeof b)[]) {
    const kinds = KIND_FIELDS[field];
    if (kinds && b[field] != null && !kinds.includes(b.type))
      issue(field, `is not a field of type ${b.type} (only of ${kinds.join(', ')})`);
  }
  const need = (field: string, ok: boolean): void => {
    if (!ok) issue(field, `is required for type ${b.type}`);
  };
  if (b.type === 'text') need('text', Boolean(b.text));
  if (b.type === 'buttons') {
    need('text', Boolean(b.text));
    need('buttons', b.buttons !== undefined);
  }
  if (b.type === 'attachment') need('url', Boolean(b.url));
  if (b.type === 'template') need('template', Boolean(b.template));
});

/** Fields that belong to some kinds only (`type`, `reply_to` go with any; `body` with none: it is the shorthand's). */
const KIND_FIELDS: Partial<Record<string, readonly string[]>> = {
  text: ['text', 'buttons'],
  url: ['attachment'],
  caption: ['attachment'],
  file_name: ['attachment'],
  buttons: ['buttons'],
  template: ['template'],
  language: ['template'],
  parameters: ['template'],
};

/**
 * Spec: `type` is required; "a body `{body: <text>}` with no `type` is
 * accepted and means a text message". So without a type only `body` (and
 * `reply_to`, which any text may need) is taken: `{text}` alone lacks its type,
 * and nothing of the body is dropped.
 */
function shorthand(b: { body?: string | undefined } & Record<string, unknown>, issue: (field: string, message: string) => void): void {
  const others = Object.keys(b).filter((k) => k !== 'body' && k !== 'reply_to' && b[k] !== undefined);
  const types = OUTGOING_MESSAGE_TYPES.join(', ');
  if (others.length)
    issue('type', `is required (one of ${types}); only the shorthand {body} may leave it out, and this body has ${others.join(', ')}`);
  else if (!b.body) issue('body', 'is required: send {type, …} or the shorthand {body: <text>}');
}
export type SendBody = z.infer<typeof SendBody>;

/** What gets stored for an outbound message. */
export interface Composed {
  body: string;
  contentType: string;
  extra: Record<string, unknown>;
}

/** The `comment_id` an inbound message on a public comment thread carries: what `reply_to` names. */
export const commentId = (messageId: number): string => `cmt_${messageId}`;

/**
 * `reply_to` is "the id of the inbound comment answered" (spec): it must name
 * an inbound comment of this thread (422 otherwise). Only public comment
 * threads have comments, so elsewhere any `reply_to` names nothing.
 */
function checkReplyTo(ws: Workspace, cv: Conversation, channel: Channel, replyTo: string): void {
  if (!channel.public) throw invalid('reply_to', 'names no inbound comment: this thread is not a public comment thread');
  const answered = [...ws.messages.values()].some(
    (m) => m.conversationId === cv.id && m.direction === 'inbound' && m.extra.comment_id === replyTo,
  );
  if (!answered) throw invalid('reply_to', `no inbound comment "${replyTo}" on this thread`);
}

/**
 * Checks a send against the thread and composes the stored message. Public
 * comment threads need `reply_to` naming one of their inbound comments and
 * accept only text; a template must be approved on the thread's own channel,
 * with `language` when it exists in several, and its placeholders filled in
 * order.
 */
export function compose(ws: Workspace, cv: Conversation, channel: Channel, b: SendBody): Composed {
  const type = b.type ?? 'text';
  if (channel.public) {
    if (!b.reply_to) throw invalid('reply_to', 'is required on a public comment thread');
    if (type !== 'text') throw invalid('type', 'only text may be published on a public comment thread');
  }
  if (b.reply_to) checkReplyTo(ws, cv, channel, b.reply_to);
  const replyTo = b.reply_to ? { reply_to: b.reply_to } : {};
  if (type === 'text') return { body: (b.body ?? b.text)!, contentType: 'text', extra: replyTo };
  if (type === 'buttons') return { body: b.text!, contentType: 'buttons', extra: { buttons: [...b.buttons!] } };
  if (type === 'attachment') {
    const url = checkAttachmentUrl(b.url!);
    const fileName = b.file_name ?? fileNameOf(url);
    return { body: b.caption ?? '', contentType: 'attachment', extra: { url: url.href, caption: b.caption ?? null, file_name: fileName } };
  }
  const versions = ws.templates.filter((t) => t.channelId === channel.id && t.name === b.template);
  if (versions.length === 0) throw invalid('template', `no approved template "${b.template}" on this channel`);
  if (versions.length > 1 && !b.language) {
    throw invalid('language', `is required: the template exists in ${versions.map((v) => v.language).join(', ')}`);
  }
  const template = b.language ? versions.find((v) => v.language === b.language) : versions[0];
  if (!template) throw invalid('language', `the template does not exist in "${b.language}"`);
  const params = b.parameters ?? [];
  if (params.length !== template.placeholders) throw invalid('parameters', `the template takes ${template.placeholders} parameters`);
  const text = template.body.replace(/\{\{(\d+)\}\}/g, (_, n: string) => params[Number(n) - 1] ?? '');
  return {
    body: text,
    contentType: 'template',
    extra: { template: template.name, language: template.language, parameters: [...params] },
  };
}

/**
 * Spec: `file_name` "defaults to the name taken from the URL": its last path
 * segment, percent-decoded (`file` when the path ends in `/`). A segment that
 * names no file is refused with 422 asking for `file_name`, rather than a
 * guess: one that is not valid percent-encoding (`a%ZZ`), one that decodes to
 * a path (`a%2Fb`) or to control characters (`a%00b`), and one longer than
 * `file_name` may be (255).
 */
function fileNameOf(url: URL): string {
  const segment = url.pathname.split('/').pop() || 'file';
  const refuse = (why: string): never => {
    throw invalid('url', `its last path segment "${segment}" ${why}, so no file name can be taken from it; send file_name`);
  };
  let name = '';
  try {
    name = decodeURIComponent(segment);
  } catch {
    refuse('is not valid percent-encoding');
  }
  if (/[/\\]/.test(name)) refuse('decodes to a path');
  if (/\p{Cc}/u.test(name)) refuse('decodes to control characters');
  if (name.length > MAX_CHARS.fileName) refuse(`decodes to more than ${MAX_CHARS.fileName} characters`);
  return name;
}

/** Spec: outside the 24-hour customer-service window only a template is accepted by the provider. */
export const SERVICE_WINDOW_MS = 24 * 3600 * 1000;

/** Whether a free-form message would be refused by the channel provider now. */
export function outsideWindow(cv: Conversation, channel: Channel, now: number): boolean {
  if (channel.public) return false;
  return cv.lastInboundAt === null || now - cv.lastInboundAt > SERVICE_WINDOW_MS;
}
