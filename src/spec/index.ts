/** The surface of src/spec/ for the rest of src/ (docs/architecture.md, "Surfaces"). @module */
export { ABILITIES, type Ability } from './abilities.js';
export {
  ASSIGNEE_TYPES,
  CONVERSATION_PRIORITIES,
  CONVERSATION_STATUSES,
  DEAL_STATUSES,
  LEAD_OUTCOMES,
  MESSAGE_DIRECTIONS,
  ORDER_STATUSES,
  OUTGOING_MESSAGE_TYPES,
  PAYMENT_STATUSES,
  type AssigneeType,
  type ConversationPriority,
  type ConversationStatus,
  type DealStatus,
  type LeadOutcome,
  type MessageDirection,
  type OrderStatus,
  type PaymentStatus,
} from './enums.js';
export {
  DERIVED_EVENT_NAMES,
  EVENT_NAMES,
  WEBHOOK_EVENT_NAMES,
  type DerivedEventName,
  type EventName,
  type WebhookEventName,
} from './events.js';
export { HEADERS } from './headers.js';
export { BURST_WINDOW_MS, BUTTONS, IDEMPOTENCY_MEMORY_MS, MAX_CHARS, MONEY, PER_PAGE } from './limits.js';
export { SEGMENT_OPERATORS, VALUELESS_OPERATORS, segmentOperators, type SegmentAttribute, type SegmentRule } from './search-rules.js';
export { SIGNATURE_HEADER, SIGNATURE_PREFIX } from './webhooks.js';
