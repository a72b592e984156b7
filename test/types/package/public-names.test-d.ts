/**
 * The public names decided in "[2/4] Shape": NonRetriableError (UnrecoverableError its deprecated alias),
 * RetryOptions of `switchyard` for a handler's retry and ApiRetryOptions of `switchyard/api` for the
 * client's, one argument order for signing (what is signed, then the secret; `sign` deprecated).
 */
import { describe, expectTypeOf, test } from 'vitest';
import * as api from '../../../src/api/public.js';
import type { ApiClientOptions, ApiRetryOptions } from '../../../src/api/public.js';
import {
  defineHandler,
  HandlerConfigError,
  NonRetriableError,
  UnrecoverableError,
  type RetryOptions,
  type ScheduleDefinition,
} from '../../../src/index.js';
import { sign, signBody, signDelivery, type Delivery } from '../../../src/testing/index.js';

describe('NonRetriableError', () => {
  test('thrown by handlers; the deprecated UnrecoverableError still compiles and is one', () => {
    defineHandler({
      id: 'a',
      on: ['lead.won'],
      handle() {
        throw new NonRetriableError('stop');
      },
    });
    defineHandler({
      id: 'b',
      on: ['lead.won'],
      handle() {
        throw new UnrecoverableError('stop');
      },
    });
    expectTypeOf(new UnrecoverableError('x')).toMatchTypeOf<NonRetriableError>();
    expectTypeOf(new HandlerConfigError('x')).toMatchTypeOf<NonRetriableError>();
    expectTypeOf(new NonRetriableError('x', { cause: new Error('why') })).toMatchTypeOf<Error>();
  });
});

describe('RetryOptions and ApiRetryOptions', () => {
  test('a handler’s and a schedule’s retry is RetryOptions (attempts, backoff)', () => {
    const retry: RetryOptions = { attempts: 3, backoff: { type: 'fixed', delay: '5s' } };
    defineHandler({ id: 'c', on: ['lead.won'], retry, handle() {} });
    expectTypeOf<NonNullable<ScheduleDefinition['retry']>>().toEqualTypeOf<RetryOptions>();
  });

  test('the client’s retry is ApiRetryOptions (HTTP attempts of one call)', () => {
    expectTypeOf<NonNullable<ApiClientOptions['retry']>>().toEqualTypeOf<Partial<ApiRetryOptions>>();
    const r: Partial<ApiRetryOptions> = { maxAttempts: 1 };
    void r;
    // @ts-expect-error not a handler's retry
    const wrong: Partial<ApiRetryOptions> = { attempts: 3 };
    void wrong;
  });

  test('switchyard/api exports no RetryOptions (one name, one type across the entry points)', () => {
    // @ts-expect-error RetryOptions is `switchyard`'s (a handler's retry); the client's is ApiRetryOptions
    type Old = api.RetryOptions;
    void (null as unknown as Old);
  });
});

describe('signing: what is signed, then the secret', () => {
  test('signDelivery and signBody; the deprecated sign still compiles', () => {
    expectTypeOf(signDelivery).parameter(0).toEqualTypeOf<Delivery | Uint8Array | string>();
    expectTypeOf(signDelivery).parameter(1).toEqualTypeOf<string>();
    expectTypeOf(signBody).toEqualTypeOf<(body: Uint8Array | string, secret: string) => string>();
    expectTypeOf(sign('secret', '{}')).toEqualTypeOf<string>();
  });
});
