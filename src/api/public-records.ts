/**
 * The API's record types (what a call returns and what an event's `data`
 * holds), types only: the zod schemas behind them are internal. Offered by
 * `switchyard/api` and, for handlers, by `switchyard`.
 * @module
 */
export type {
  Contact,
  ContactLifecycle,
  LabelRef,
  LifecycleStage,
  Assignee,
  ClosingNote,
  Conversation,
  ConversationStatus,
  Message,
  Lead,
  Me,
  Deal,
  DealStatus,
  Order,
  OrderLine,
  OrderStatus,
  PaymentStatus,
  Product,
  ProductVariant,
  Task,
} from '../spec/schemas/index.js';
