/**
 * The error classes a call of the Workspace client throws, one list read by
 * both entry points that offer them: `switchyard/api` and, for handlers that
 * catch them from `ctx.api`, `switchyard` itself (the same classes, so
 * `instanceof` holds whichever entry a module imports them from). The mapping
 * from a response to a class (`errorFromResponse`) stays internal.
 * @module
 */
export {
  ApiError,
  BadRequestError,
  UnauthorizedError,
  TokenExpiredError,
  ForbiddenError,
  LegacyKeyRetiredError,
  NotFoundError,
  PlanLimitError,
  ValidationError,
  IdempotencyKeyReusedError,
  IdempotencyInFlightError,
  RateLimitedError,
  QuotaExhaustedError,
  ServerError,
  NetworkError,
  TimeoutError,
  OutcomeUnknownError,
  UnexpectedResponseError,
  RequestValidationError,
  type FieldErrors,
} from './errors.js';
export type { MalformedRecord } from './mismatch.js';
