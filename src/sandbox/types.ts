/**
 * In-memory records of the sandbox. Times are epoch milliseconds and money is
 * integer cents; the views in `views/` turn them into the API's shapes
 * (ISO timestamps, two-decimal strings), so arithmetic never touches floats.
 */

import type {
  Ability,
  AssigneeType,
  ConversationPriority,
  ConversationStatus,
  DealStatus,
  LeadOutcome,
  MessageDirection,
  OrderStatus,
  PaymentStatus,
} from '../spec/index.js';

export type { ConversationStatus, OrderStatus };

export interface Teammate {
  id: number;
  name: string;
  email: string;
  active: boolean;
  viewPhone: boolean;
}
export interface Channel {
  id: number;
  name: string;
  type: string;
  /** public comment thread (spec: audience = public) */ public: boolean;
}
export interface LifecycleStage {
  id: number;
  name: string;
  role: string | null;
  outcome: string | null;
}
export interface Label {
  id: number;
  name: string;
}
/** A team queue conversations are routed to (PATCH /conversations `team_id`). */
export interface Team {
  id: number;
  name: string;
}
/** An AI agent a conversation can be assigned to (`assignee: {type: ai, id}`). */
export interface AiAgent {
  id: number;
  name: string;
}
export interface PipelineStage {
  id: number;
  name: string;
  kind: 'open' | 'won' | 'lost';
}
export interface Pipeline {
  id: number;
  name: string;
  stages: PipelineStage[];
}
export interface ClosingNote {
  category: string;
  description: string;
}
export interface Template {
  name: string;
  channelId: number;
  language: string;
  body: string;
  placeholders: number;
}
export interface Segment {
  id: number;
  name: string;
  match: SegmentRule[][];
}
export interface SegmentRule {
  attribute: string;
  operator: string;
  value?: unknown;
}

export interface Variant {
  id: number;
  name: string;
  options: Record<string, string>;
  sku: string;
  priceCents: number;
  isActive: boolean;
  onHand: number | null;
  reserved: number;
}
export interface Product {
  id: number;
  name: string;
  description: string | null;
  sku: string;
  priceCents: number;
  isActive: boolean;
  trackStock: boolean;
  onHand: number | null;
  reserved: number;
  imageUrl: string | null;
  variants: Variant[];
  createdAt: number;
}

export interface Contact {
  id: number;
  name: string;
  email: string | null;
  phone: string | null;
  lifecycleStageId: number;
  blocked: boolean;
  labelIds: number[];
  language: string | null;
  lastSeenAt: number | null;
  createdAt: number;
  updatedAt: number;
}
export interface Conversation {
  id: number;
  contactId: number;
  channelId: number;
  status: ConversationStatus;
  subject: string | null;
  assignee: { type: AssigneeType; id: number } | null;
  teamId: number | null;
  priority: ConversationPriority;
  summary: string | null;
  closingCategory: string | null;
  snoozedUntil: number | null;
  lastMessageAt: number;
  lastInboundAt: number | null;
  closedAt: number | null;
  createdAt: number;
}
export interface Message {
  id: number;
  conversationId: number;
  type: 'message' | 'note';
  direction: MessageDirection | null;
  senderType: 'contact' | 'user';
  userId: number | null;
  body: string;
  contentType: string;
  status: string | null;
  createdAt: number;
  extra: Record<string, unknown>;
}
export interface Deal {
  id: number;
  name: string;
  pipelineId: number;
  stageId: number;
  status: DealStatus;
  amountCents: number;
  closeDate: string | null;
  ownerId: number | null;
  organizationId: number | null;
  source: string;
  closedAt: number | null;
  closedLostReason: string | null;
  contactIds: number[];
  createdAt: number;
}
export interface OrderLine {
  id: number;
  productId: number | null;
  variantId: number | null;
  name: string;
  sku: string;
  quantity: number;
  unitPriceCents: number;
}
export interface Order {
  id: number;
  number: number;
  contactId: number;
  conversationId: number | null;
  dealId: number | null;
  ownerId: number | null;
  status: OrderStatus;
  source: string;
  payment: { method: string; status: PaymentStatus; reference: string | null; paidAt: number | null };
  delivery: { address: string | null; city: string | null; area: string | null; feeCents: number };
  items: OrderLine[];
  discountCents: number;
  notes: string | null;
  externalId: string | null;
  confirmedAt: number | null;
  deliveredAt: number | null;
  cancelledAt: number | null;
  cancelReason: string | null;
  createdAt: number;
  updatedAt: number;
}
export interface Task {
  id: number;
  title: string;
  description: string | null;
  type: string;
  status: 'open' | 'done';
  dueAt: number;
  completedAt: number | null;
  assigneeId: number;
  createdBy: number;
  contactId: number | null;
}
export interface Lead {
  id: number;
  contactId: number;
  name: string;
  valueCents: number | null;
  source: string | null;
  outcome: LeadOutcome;
  createdAt: number;
}

/** One workspace: its settings and its records (records keyed by id). */
export interface Workspace {
  id: number;
  /** Short name the `/_sandbox` hooks and `switchyard dev --workspaces` know it by (`acme`, `other`, `ws3`, …); not part of the API. */
  key: string;
  name: string;
  company: { id: number; name: string };
  account: { id: number; name: string };
  teammates: Teammate[];
  teams: Team[];
  aiAgents: AiAgent[];
  channels: Channel[];
  stages: LifecycleStage[];
  labels: Label[];
  pipelines: Pipeline[];
  closingNotes: ClosingNote[];
  templates: Template[];
  paymentMethods: { key: string; active: boolean }[];
  segments: Segment[];
  products: Map<number, Product>;
  contacts: Map<number, Contact>;
  conversations: Map<number, Conversation>;
  messages: Map<number, Message>;
  deals: Map<number, Deal>;
  orders: Map<number, Order>;
  tasks: Map<number, Task>;
  leads: Map<number, Lead>;
  nextOrderNumber: number;
}

/** A personal access token; the plain value is kept only because the sandbox prints it. */
export interface Token {
  value: string;
  label: string;
  workspaceId: number;
  teammateId: number;
  abilities: Ability[];
  expiresAt: number | null;
  legacy: boolean;
}
