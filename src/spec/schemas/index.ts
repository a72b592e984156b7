/** The surface of src/spec/schemas/ for the rest of src/ (docs/architecture.md, "Surfaces"). @module */
export { DecimalString, Id, Timestamp, page, single } from './common.js';
export { Contact, ContactLifecycle, LabelRef, LifecycleStage } from './contact.js';
export { Assignee, ClosingNote, Conversation, ConversationStatus } from './conversation.js';
export { Deal, DealStatus } from './deal.js';
export { Lead } from './lead.js';
export { Me } from './me.js';
export { Message } from './message.js';
export { Order, OrderLine, OrderStatus, PaymentStatus } from './order.js';
export { Product, ProductVariant } from './product.js';
export { Task } from './task.js';
