import { addContact, addConversation, addMessage } from '../domain/records.js';
import type { IdSequence } from '../ids.js';
import type { Workspace } from '../types.js';
import { seedCatalogue } from './catalogue.js';
import { emptyWorkspace, standardSettings } from './empty-workspace.js';

const DAY = 864e5;
const HOUR = 36e5;

/**
 * The first workspace ("Acme"): teammates with and without the view-phone
 * permission plus an inactive one, three channels (one a public comment
 * thread), templates per channel, catalogue, and contacts with threads,
 * messages, a deal, an order, tasks and a lead.
 */
export function seedAcme(ids: IdSequence, now: number): Workspace {
  const ws = emptyWorkspace(ids, 'Acme', 'acme');
  standardSettings(ws, ids);
  ws.teammates.push(
    { id: ids.take(), name: 'Olivia Owner', email: 'olivia@acme.test', active: true, viewPhone: true },
    { id: ids.take(), name: 'Sam Support', email: 'sam@acme.test', active: true, viewPhone: false },
    { id: ids.take(), name: 'Ivan Inactive', email: 'ivan@acme.test', active: false, viewPhone: true },
  );
  const [whatsapp, instagram, comments] = [
    { id: ids.take(), name: 'WhatsApp', type: 'whatsapp', public: false },
    { id: ids.take(), name: 'Instagram', type: 'instagram', public: false },
    { id: ids.take(), name: 'Facebook comments', type: 'facebook_comments', public: true },
  ];
  ws.channels.push(whatsapp, instagram, comments);
  ws.templates.push(
    { name: 'order_update', channelId: whatsapp.id, language: 'en', body: 'Hi {{1}}, your order {{2}} is on its way.', placeholders: 2 },
    { name: 'welcome', channelId: whatsapp.id, language: 'en', body: 'Welcome, {{1}}!', placeholders: 1 },
    { name: 'welcome', channelId: whatsapp.id, language: 'ar', body: 'أهلا {{1}}!', placeholders: 1 },
    { name: 'ig_hello', channelId: instagram.id, language: 'en', body: 'Hello from Acme!', placeholders: 0 },
  );
  seedCatalogue(ws, ids, now);
  const [owner] = ws.teammates;
  const [, , customerStage] = ws.stages;
  const [customer, vip] = ws.labels;

  const alice = addContact(ws, ids.take(), now - 30 * DAY, {
    name: 'Alice Adams',
    email: 'alice@example.com',
    phone: '+201001234567',
    labelIds: [customer!.id],
    language: 'en',
  });
  const bob = addContact(ws, ids.take(), now - 20 * DAY, { name: 'Bob Brown', phone: '+44 7700 900123', language: 'en' });
  const carol = addContact(ws, ids.take(), now - 10 * DAY, {
    name: 'Carol Chen',
    email: 'carol@example.com',
    labelIds: [vip!.id, customer!.id],
    lifecycleStageId: customerStage!.id,
    language: 'ar',
  });

  const c1 = addConversation(ws, ids.take(), now - 2 * HOUR, { contactId: alice.id, channelId: whatsapp.id, subject: 'Order question' });
  addMessage(ws, ids.take(), now - 2 * HOUR, {
    conversationId: c1.id,
    direction: 'inbound',
    senderType: 'contact',
    body: 'Hi, where is my order?',
    status: null,
  });
  addMessage(ws, ids.take(), now - HOUR, { conversationId: c1.id, userId: owner!.id, body: 'Checking now!' });
  const c2 = addConversation(ws, ids.take(), now - 3 * DAY, {
    contactId: bob.id,
    channelId: instagram.id,
    status: 'closed',
    closedAt: now - 2 * DAY,
    closingCategory: 'Resolved',
  });
  addMessage(ws, ids.take(), now - 3 * DAY, {
    conversationId: c2.id,
    direction: 'inbound',
    senderType: 'contact',
    body: 'Do you ship to the UK?',
    status: null,
  });
  const c3 = addConversation(ws, ids.take(), now - 5 * HOUR, { contactId: carol.id, channelId: comments.id });
  addMessage(ws, ids.take(), now - 5 * HOUR, {
    conversationId: c3.id,
    direction: 'inbound',
    senderType: 'contact',
    body: 'Love this!',
    status: null,
    extra: { comment_id: 'cmt_1' },
  });

  const sales = ws.pipelines[0]!;
  ws.deals.set(ids.take(), {
    id: 0,
    name: 'Bulk T-shirts',
    pipelineId: sales.id,
    stageId: sales.stages[0]!.id,
    status: 'open',
    amountCents: 150000,
    closeDate: null,
    ownerId: owner!.id,
    organizationId: null,
    source: 'other',
    closedAt: null,
    closedLostReason: null,
    contactIds: [alice.id],
    createdAt: now - 7 * DAY,
  });
  for (const [id, deal] of ws.deals) deal.id = id;
  ws.tasks.set(ids.take(), {
    id: 0,
    title: 'Call Alice back',
    description: null,
    type: 'call',
    status: 'open',
    dueAt: now + DAY,
    completedAt: null,
    assigneeId: owner!.id,
    createdBy: owner!.id,
    contactId: alice.id,
  });
  ws.tasks.set(ids.take(), {
    id: 0,
    title: 'Send catalogue',
    description: 'PDF',
    type: 'email',
    status: 'open',
    dueAt: now + 2 * HOUR,
    completedAt: null,
    assigneeId: owner!.id,
    createdBy: owner!.id,
    contactId: null,
  });
  for (const [id, task] of ws.tasks) task.id = id;
  const leadId = ids.take();
  ws.leads.set(leadId, {
    id: leadId,
    contactId: bob.id,
    name: 'Bob wholesale',
    valueCents: 50000,
    source: 'instagram',
    outcome: 'open',
    createdAt: now - 4 * DAY,
  });
  ws.segments.push({ id: ids.take(), name: 'VIP', match: [[{ attribute: 'label', operator: 'has', value: 'vip' }]] });
  return ws;
}
