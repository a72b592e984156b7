/**
 * The Workspace REST API client as the rest of `src/` uses it (limiters,
 * transport helpers, schemas included). The package's public surface of the
 * client is `./public.ts` (`switchyard/api`).
 * @module
 */
export { createApiClient, type ApiClient, type ApiClientOptions } from './client.js';
export * from './errors.js';
export type { ApiPromise, ApiResponse, RateLimitInfo } from './response.js';
export { Paginator, type Page, type PageQuery } from './pagination.js';
export type { ApiLogger, CallEvent, HttpMethod, RequestOptions, WriteOptions } from './transport.js';
export { checkBaseUrl } from './transport.js';
export { DEFAULT_API_RETRY, type ApiRetryOptions } from './retry.js';
export { randomIdempotencyKey, type IdempotencyContext, type IdempotencyKeyGenerator } from './idempotency-key.js';
export {
  BURST_WINDOW_MS,
  LIMITER_PRIORITIES,
  SHARE_PASSED_OVER,
  createMemoryRateLimiter,
  tokenKey,
  type LimiterPriority,
  type MemoryRateLimiterOptions,
  type Permit,
  type RateLimiter,
  type RateLimitObservation,
} from './rate-limiter.js';
export { createRedisRateLimiter, type RedisRateLimiterOptions } from './rate-limiter-redis.js';
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
// The resource schemas, every one (they are the client's reading of the answers).
export * from '../spec/schemas/index.js';
export { SEGMENT_OPERATORS, type SegmentAttribute, segmentOperators, type SegmentRule, VALUELESS_OPERATORS } from '../spec/index.js';
export { asSentence } from './sentence.js';
export type { WriteMemo } from './transport.js';
