import { describe, expect, it } from 'vitest';
import * as errors from '../../../src/api/errors.js';
import * as api from '../../../src/api/public.js';
import * as root from '../../../src/index.js';
import * as sandbox from '../../../src/sandbox/index.js';
import * as testing from '../../../src/testing/index.js';

/** Every error class a client call throws: ApiError and its subclasses, as src/api/errors.ts defines them. */
const ERROR_CLASSES = Object.entries(errors)
  .filter(([, v]) => typeof v === 'function' && (v === errors.ApiError || v.prototype instanceof errors.ApiError))
  .map(([k]) => k)
  .sort();

/**
 * The runtime names of each package entry point (types vanish at runtime; the
 * packed-tarball test checks those). A new export is a decision: add it here.
 */
describe('package entry points export only their public names', () => {
  it('switchyard: the handler kit and the errors of ctx.api calls', () => {
    expect(Object.keys(root).sort()).toEqual(
      [
        'ABILITIES',
        'BusinessHoursError',
        'addBusinessTime',
        'businessTimeBetween',
        'DEFAULT_RETRY',
        'DERIVED_EVENT_NAMES',
        'EVENT_NAMES',
        'HandlerConfigError',
        'HandlerDefinitionError',
        'HandlerSettingsError',
        'HandlerTimeoutError',
        'NonRetriableError',
        'UnrecoverableError',
        'businessHoursSetting',
        'closedPeriodStart',
        'defineHandler',
        'defineSchedule',
        'durationSetting',
        'isDerivedEvent',
        'isEventName',
        'isHandler',
        'isSchedule',
        'isOpen',
        'parseBusinessHours',
        ...ERROR_CLASSES,
      ].sort(),
    );
    for (const internal of [
      'tokenKey',
      'BURST_WINDOW_MS',
      'errorFromResponse',
      'loadConfig',
      'sign',
      'verify',
      'createReceiver',
      'startService',
      'createApiClient',
    ]) {
      expect(root).not.toHaveProperty(internal);
    }
  });

  it('switchyard: NonRetriableError is our own class; UnrecoverableError, deprecated, is one of them and no longer bullmq’s', async () => {
    const bullmq = await import('bullmq');
    expect(new root.UnrecoverableError('x')).toBeInstanceOf(root.NonRetriableError);
    expect(root.UnrecoverableError).not.toBe(bullmq.UnrecoverableError);
    expect(new root.NonRetriableError('x')).not.toBeInstanceOf(bullmq.UnrecoverableError);
    expect(new root.HandlerConfigError('x')).toBeInstanceOf(root.NonRetriableError);
  });

  it('switchyard/api: createApiClient and the error classes', () => {
    expect(Object.keys(api).sort()).toEqual(['createApiClient', ...ERROR_CLASSES].sort());
  });

  it('the error classes are the same objects from switchyard and switchyard/api (instanceof holds either way)', () => {
    expect(ERROR_CLASSES.length).toBeGreaterThan(15);
    for (const name of ERROR_CLASSES) expect((root as Record<string, unknown>)[name]).toBe((api as Record<string, unknown>)[name]);
  });

  it('switchyard/sandbox: createSandbox', () => {
    expect(Object.keys(sandbox)).toEqual(['createSandbox']);
  });

  it('switchyard/testing: the handler and schedule test kit, deliveries, signing, the sandbox', () => {
    expect(Object.keys(testing).sort()).toEqual([
      'DeliveryError',
      'MemoryStepStore',
      'SIGNATURE_HEADER',
      'createEvent',
      'createSandbox',
      'loadFixture',
      'readDelivery',
      'sandboxClient',
      'sign',
      'signBody',
      'signDelivery',
      'testHandler',
      'testSchedule',
      'toEvent',
    ]);
    expect(testing.createSandbox).toBe(sandbox.createSandbox);
  });

  it('switchyard/testing: one argument order, what is signed then the secret; sign (deprecated) is the old order of the same signature', () => {
    const header = testing.signBody('{"a":1}', 's');
    expect(header).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(testing.signDelivery('{"a":1}', 's').headers[testing.SIGNATURE_HEADER.toLowerCase()]).toBe(header);
    expect(testing.sign('s', '{"a":1}')).toBe(header);
  });
});
