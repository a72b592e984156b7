import { addContact, addConversation, addMessage } from '../domain/records.js';
import type { IdSequence } from '../ids.js';
import type { Workspace } from '../types.js';
import { addProduct } from './catalogue.js';
import { emptyWorkspace, standardSettings } from './empty-workspace.js';

/**
 * A second workspace ("Other Co") holding one record of every kind, so a
 * token of the first workspace can be shown to get 404 for each of them.
 */
export function seedOther(ids: IdSequence, now: number): Workspace {
  const ws = emptyWorkspace(ids, 'Other Co', 'other');
  standardSettings(ws, ids);
  const owner = { id: ids.take(), name: 'Otto Other', email: 'otto@other.test', active: true, viewPhone: true };
  ws.teammates.push(owner);
  const channel = { id: ids.take(), name: 'WhatsApp', type: 'whatsapp', public: false };
  ws.channels.push(channel);
  const zed = addContact(ws, ids.take(), now - 5 * 864e5, { name: 'Zed Zimmer', email: 'zed@example.com', phone: '+49301234567' });
  const conv = addConversation(ws, ids.take(), now - 36e5, { contactId: zed.id, channelId: channel.id });
  addMessage(ws, ids.take(), now - 36e5, {
    conversationId: conv.id,
    direction: 'inbound',
    senderType: 'contact',
    body: 'Hallo',
    status: null,
  });
  const product = addProduct(ws, ids, now, { name: 'Widget', sku: 'W-1', priceCents: 990, isActive: true, trackStock: true, onHand: 4 });
  const sales = ws.pipelines[0]!;
  const dealId = ids.take();
  ws.deals.set(dealId, {
    id: dealId,
    name: 'Zed deal',
    pipelineId: sales.id,
    stageId: sales.stages[0]!.id,
    status: 'open',
    amountCents: 1000,
    closeDate: null,
    ownerId: owner.id,
    organizationId: null,
    source: 'other',
    closedAt: null,
    closedLostReason: null,
    contactIds: [zed.id],
    createdAt: now,
  });
  const orderId = ids.take();
  ws.orders.set(orderId, {
    id: orderId,
    number: ws.nextOrderNumber++,
    contactId: zed.id,
    conversationId: conv.id,
    dealId: null,
    ownerId: null,
    status: 'new',
    source: 'api',
    payment: { method: 'cod', status: 'unpaid', reference: null, paidAt: null },
    delivery: { address: null, city: null, area: null, feeCents: 0 },
    items: [{ id: ids.take(), productId: product.id, variantId: null, name: 'Widget', sku: 'W-1', quantity: 1, unitPriceCents: 990 }],
    discountCents: 0,
    notes: null,
    externalId: 'other-1',
    confirmedAt: null,
    deliveredAt: null,
    cancelledAt: null,
    cancelReason: null,
    createdAt: now,
    updatedAt: now,
  });
  const taskId = ids.take();
  ws.tasks.set(taskId, {
    id: taskId,
    title: 'Zed task',
    description: null,
    type: 'call',
    status: 'open',
    dueAt: now + 864e5,
    completedAt: null,
    assigneeId: owner.id,
    createdBy: owner.id,
    contactId: zed.id,
  });
  const leadId = ids.take();
  ws.leads.set(leadId, {
    id: leadId,
    contactId: zed.id,
    name: 'Zed lead',
    valueCents: null,
    source: null,
    outcome: 'open',
    createdAt: now,
  });
  return ws;
}
