/**
 * The closed value lists of the API spec: statuses, outcomes and kinds a field
 * takes one of. Each list is a tuple, so `(typeof LIST)[number]` is its union type.
 */

/** Order status (spec: Orders; moves between them are the service's rule). */
export const ORDER_STATUSES = ['new', 'confirmed', 'preparing', 'out_for_delivery', 'delivered', 'cancelled', 'returned'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** An order's payment status. */
export const PAYMENT_STATUSES = ['unpaid', 'paid', 'refunded'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** Conversation status. */
export const CONVERSATION_STATUSES = ['open', 'pending', 'snoozed', 'closed'] as const;
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];

/** Conversation priority. */
export const CONVERSATION_PRIORITIES = ['low', 'normal', 'high'] as const;
export type ConversationPriority = (typeof CONVERSATION_PRIORITIES)[number];

/** Who a conversation is assigned to: a teammate (`user`) or an AI agent. */
export const ASSIGNEE_TYPES = ['user', 'ai'] as const;
export type AssigneeType = (typeof ASSIGNEE_TYPES)[number];

/** Deal status. */
export const DEAL_STATUSES = ['open', 'won', 'lost'] as const;
export type DealStatus = (typeof DEAL_STATUSES)[number];

/** Lead outcome (older overview endpoints). */
export const LEAD_OUTCOMES = ['open', 'won', 'lost'] as const;
export type LeadOutcome = (typeof LEAD_OUTCOMES)[number];

/** Direction of a message; notes have none. */
export const MESSAGE_DIRECTIONS = ['inbound', 'outbound'] as const;
export type MessageDirection = (typeof MESSAGE_DIRECTIONS)[number];

/** Kinds of outgoing message (`POST /conversations/{id}/messages` `type`). */
export const OUTGOING_MESSAGE_TYPES = ['text', 'attachment', 'template', 'buttons'] as const;
export type OutgoingMessageType = (typeof OUTGOING_MESSAGE_TYPES)[number];
