/**
 * `switchyard/api`: the Workspace REST client on its own. Creating a client,
 * its options, the resource and record types, and the error classes a call
 * throws. The rate limiter, transport and error mapping behind it are internal
 * (`./index.ts` is the barrel the rest of `src/` uses).
 * @module
 */
export { createApiClient, type ApiClient, type ApiClientOptions } from './client.js';
export * from './public-errors.js';
export type * from './public-records.js';
export type { ApiPromise, ApiResponse, RateLimitInfo } from './response.js';
export type { Paginator, Page, PageQuery } from './pagination.js';
export type { ApiLogger, CallEvent, HttpMethod, RequestOptions, WriteOptions } from './transport.js';
/** The client's `retry` (HTTP attempts of one call); a handler's `retry` is `RetryOptions` of `switchyard`. */
export type { ApiRetryOptions } from './retry.js';
export type { IdempotencyContext, IdempotencyKeyGenerator } from './idempotency-key.js';
/** The shape of a custom limiter (`rateLimiter` option); the built-in ones are chosen by `redis`/`burst`. */
export type { LimiterPriority, Permit, RateLimiter, RateLimitObservation } from './rate-limiter.js';
export type {
  ContactCreate,
  ContactInclude,
  ContactListQuery,
  ContactPatch,
  ContactRef,
  ContactSearch,
  ContactsResource,
} from './resources/contacts.js';
export type { ConversationListQuery, ConversationPatch, ConversationsResource } from './resources/conversations.js';
export type {
  AttachmentMessage,
  ButtonsMessage,
  MessagesResource,
  NoteCreate,
  NotesResource,
  OutgoingMessage,
  TemplateMessage,
  TextMessage,
} from './resources/messages.js';
export type { DealCreate, DealListQuery, DealPatch, DealsResource } from './resources/deals.js';
export type { OrderCreate, OrderLineInput, OrderListQuery, OrderPatch, OrdersResource } from './resources/orders.js';
export type { ProductListQuery, ProductsResource } from './resources/products.js';
export type { TaskCreate, TaskListQuery, TaskPatch, TasksResource } from './resources/tasks.js';
export type { LeadCreate, LeadListQuery, LeadsResource } from './resources/leads.js';
export type { SegmentAttribute, SegmentRule } from '../spec/index.js';
