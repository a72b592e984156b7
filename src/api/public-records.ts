/**
 * The API's record types (what a call returns and what an event's `data`
 * holds), types only: the zod schemas behind them are internal. Offered by
 * `switchyard/api` and, for handlers, by `switchyard`.
 * @module
 */
export type { Contact, ContactLifecycle, LabelRef, LifecycleStage } from '../spec/schemas/contact.js';
export type { Assignee, ClosingNote, Conversation, ConversationStatus } from '../spec/schemas/conversation.js';
export type { Message } from '../spec/schemas/message.js';
export type { Lead } from '../spec/schemas/lead.js';
export type { Me } from '../spec/schemas/me.js';
export type { Deal, DealStatus } from '../spec/schemas/deal.js';
export type { Order, OrderLine, OrderStatus, PaymentStatus } from '../spec/schemas/order.js';
export type { Product, ProductVariant } from '../spec/schemas/product.js';
export type { Task } from '../spec/schemas/task.js';
