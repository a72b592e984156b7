import { Contact, Conversation, Deal, type Lead, type Message, Task } from '../spec/schemas/index.js';
import { contactPath } from './dry-contacts.js';
import {
  cents,
  data,
  found,
  foundList,
  int,
  money,
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

/** A reference the dry run cannot know (the default pipeline of a new deal): id 0, no name. */
const UNKNOWN = { id: 0, name: '' } as const;

/** `POST /conversations`: the contact's live thread on the channel (200) when a read finds one, else a new open thread (201). */
async function openConversation(b: Body, env: DryEnv) {
  const ref = refText(b['contact']);
  const channelId = int(b['channel_id']) ?? 0;
  let contactId = refId(ref);
  if (contactId === undefined) {
    const l = await env.read(contactPath(ref));
    if (l.status === 404) return unprocessable('contact', 'no such contact');
    contactId = found(l, Contact)?.id ?? env.nextId();
  }
  const threads =
    foundList(
      await env.read('/conversations', { query: { contact_id: String(contactId), channel_id: String(channelId), per_page: '100' } }),
      Conversation,
    ) ?? [];
  const live = threads.find((t) => t.status !== 'closed' && t.channel.id === channelId);
  if (live) return data(200, live);
  const at = env.now();
  const channel = threads.find((t) => t.channel.id === channelId)?.channel ?? { id: channelId, name: '', type: '' };
  const c: Conversation = {
    id: env.nextId(),
    contact_id: contactId,
    channel,
    status: 'open',
    subject: null,
    assignee: null,
    last_message_at: at,
    closed_at: null,
    created_at: at,
  };
  env.remember(`/conversations/${c.id}`, c);
  return data(201, c);
}

/** `PATCH /conversations/{id}`: status (closing stamps `closed_at`) and assignee; the other fields are not part of the record. */
async function changeConversation(id: string, b: Body, env: DryEnv) {
  const path = `/conversations/${id}`;
  const l = await env.read(path);
  if (l.status === 404) return notFound(l);
  const at = env.now();
  const cur: Conversation = found(l, Conversation) ?? {
    id: Number(id),
    contact_id: 0,
    channel: { ...UNKNOWN, type: '' },
    status: 'open',
    subject: null,
    assignee: null,
    last_message_at: at,
    closed_at: null,
    created_at: at,
  };
  const status = Conversation.shape.status.safeParse(b['status']);
  const assignee = 'assignee' in b ? Conversation.shape.assignee.safeParse(b['assignee']) : undefined;
  const c = overlay(cur, {
    status: status.success ? status.data : undefined,
    closed_at: status.success ? (status.data === 'closed' ? at : null) : undefined,
    assignee: assignee?.success ? assignee.data : undefined,
  });
  env.remember(path, c);
  return data(200, c);
}

/** `POST /conversations/{id}/messages` and `/notes`: a message by the token's teammate in an existing thread (404 passed on). */
async function addMessage(id: string, b: Body, env: DryEnv, note: boolean) {
  const l = await env.read(`/conversations/${id}`);
  if (l.status === 404) return notFound(l);
  const kind = str(b['type']) ?? 'text';
  const m: Message = {
    id: env.nextId(),
    conversation_id: Number(id),
    type: note ? 'note' : 'message',
    direction: note ? null : 'outbound',
    sender_type: 'user',
    user_id: await env.teammateId(),
    body: str(b[note ? 'body' : 'text']) ?? str(b['caption']) ?? str(b['body']) ?? '',
    content_type: note ? 'text' : kind,
    status: note ? null : 'sent',
    created_at: env.now(),
  };
  env.remember(`/messages/${m.id}`, m);
  return data(201, m);
}

/** The deal fields a create or update body sets. */
const dealFields = (b: Body) => ({
  name: str(b['name']),
  amount: 'amount' in b ? money(cents(b['amount'])) : undefined,
  source: nullable(b, 'source', str) ?? undefined,
  owner_id: nullable(b, 'owner_id', int),
  close_date: nullable(b, 'close_date', str),
  closed_lost_reason: nullable(b, 'closed_lost_reason', str),
});

function newDeal(id: number, b: Body, env: DryEnv): Deal {
  const contact = int(b['contact_id']);
  const base: Deal = {
    id,
    name: '',
    pipeline: { id: int(b['pipeline_id']) ?? UNKNOWN.id, name: '' },
    stage: { id: int(b['stage_id']) ?? UNKNOWN.id, name: '' },
    status: 'open',
    amount: '0.00',
    close_date: null,
    owner_id: null,
    organization_id: null,
    source: 'other',
    closed_at: null,
    closed_lost_reason: null,
    contact_ids: contact === undefined ? [] : [contact],
    created_at: env.now(),
  };
  return overlay(base, dealFields(b));
}

/** `PATCH /tasks/{id}` and `POST /tasks`: a task by the token's teammate; `done` stamps `completed_at`. */
async function task(id: number, b: Body, env: DryEnv, cur: Task | undefined): Promise<Task> {
  const me = (await env.teammateId()) ?? 0;
  const at = env.now();
  const status = str(b['status']);
  const base: Task = cur ?? {
    id,
    title: '',
    description: null,
    type: 'todo',
    status: 'open',
    due_at: at,
    completed_at: null,
    assignee_id: me,
    created_by: me,
    contact_id: null,
  };
  return overlay(base, {
    title: str(b['title']),
    description: nullable(b, 'description', str),
    type: str(b['type']),
    status,
    due_at: str(b['due_at']),
    assignee_id: int(b['assignee_id']),
    contact_id: nullable(b, 'contact_id', int),
    completed_at: status === undefined || status === base.status ? undefined : status === 'done' ? at : null,
  });
}

/** Answers of the conversation, message, deal, task and lead writes. */
export const RECORD_ROUTES: readonly DryRoute[] = [
  { method: 'POST', pattern: '/conversations', op: 'conversations.open', answer: (_p, b, env) => openConversation(b, env) },
  {
    method: 'PATCH',
    pattern: '/conversations/:id',
    op: 'conversations.update',
    answer: ([id = ''], b, env) => changeConversation(id, b, env),
  },
  {
    method: 'POST',
    pattern: '/conversations/:id/messages',
    op: 'messages.send',
    answer: ([id = ''], b, env) => addMessage(id, b, env, false),
  },
  { method: 'POST', pattern: '/conversations/:id/notes', op: 'notes.create', answer: ([id = ''], b, env) => addMessage(id, b, env, true) },
  {
    method: 'POST',
    pattern: '/deals',
    op: 'deals.create',
    async answer(_p, b, env) {
      const d = newDeal(env.nextId(), b, env);
      env.remember(`/deals/${d.id}`, d);
      return data(201, d);
    },
  },
  {
    method: 'PATCH',
    pattern: '/deals/:id',
    op: 'deals.update',
    async answer([id = ''], b, env) {
      const l = await env.read(`/deals/${id}`);
      if (l.status === 404) return notFound(l);
      const cur = found(l, Deal) ?? newDeal(Number(id), {}, env);
      const stageId = int(b['stage_id']);
      const d = overlay(cur, {
        ...dealFields(b),
        stage: stageId === undefined || stageId === cur.stage.id ? undefined : { id: stageId, name: '' },
      });
      env.remember(`/deals/${id}`, d);
      return data(200, d);
    },
  },
  {
    method: 'POST',
    pattern: '/tasks',
    op: 'tasks.create',
    async answer(_p, b, env) {
      const t = await task(env.nextId(), b, env, undefined);
      env.remember(`/tasks/${t.id}`, t);
      return data(201, t);
    },
  },
  {
    // The API has no GET of one task: a task of this run is changed, any other is built from the body and the path id.
    method: 'PATCH',
    pattern: '/tasks/:id',
    op: 'tasks.update',
    async answer([id = ''], b, env) {
      const own = Task.safeParse(env.own(`/tasks/${id}`));
      const t = await task(Number(id), b, env, own.success ? own.data : undefined);
      env.remember(`/tasks/${id}`, t);
      return data(200, t);
    },
  },
  {
    method: 'POST',
    pattern: '/leads',
    op: 'leads.create',
    async answer(_p, b, env) {
      const value = nullable(b, 'value', (v) => (typeof v === 'number' ? money(cents(v)) : undefined));
      const lead: Lead = {
        id: env.nextId(),
        contact_id: int(b['contact_id']) ?? 0,
        name: str(b['name']) ?? '',
        value: value ?? null,
        source: nullable(b, 'source', str) ?? null,
        outcome: 'open',
      };
      return data(201, lead);
    },
  },
];
