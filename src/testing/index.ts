/**
 * `switchyard/testing`: what a handler's tests use.
 *
 * - `testHandler(handler, input, options?)` runs one handler exactly as the
 *   worker does (its runner, context, step store, Idempotency-Keys and
 *   timeout) against an in-process sandbox (fresh and seeded per call, or one
 *   you pass to share state and its request log; no port is opened) or a
 *   given API, and returns `{ outcome, error, reason, calls, steps, logs,
 *   event, delivery, sandbox, waits, state }`. A failing handler is an
 *   `outcome`, never a throw. Workflows run on a virtual clock: sleeps and
 *   waits end at once, `events` are what waits see (and `cancelOn` reacts
 *   to), `waits` reports each one, `state` seeds and reports `ctx.state`.
 * - `testSchedule(schedule, options?)` runs one schedule for one tick
 *   (`at`, default now) the same way, and returns the same shape with `tick`
 *   in place of `event`.
 * - `createEvent(name, overrides?)`: a valid typed event, defaults from the
 *   shipped fixture (whose ids are the sandbox seed's).
 * - `sandboxClient(sandbox)`: a client of a sandbox in this process, to set up
 *   records and check what a handler changed.
 * - Deliveries (the package's fixtures, a captured file, the event a handler
 *   receives for one), signing a delivery as the workspace does
 *   (`signDelivery(delivery, secret)`, `signBody(body, secret)`: what is
 *   signed first, then the secret), the sandbox.
 *
 * @example
 * import { expect, it } from 'vitest';
 * import { createEvent, testHandler } from 'switchyard/testing';
 * import leadWon from '../handlers/lead-won.js';
 *
 * it('labels the contact of a won lead', async () => {
 *   const run = await testHandler(leadWon, createEvent('lead.won', { data: { contact_id: 35 } }));
 *   expect(run.outcome).toBe('completed');
 *   expect(run.calls.map((c) => `${c.method} ${c.path} ${c.status}`)).toEqual([
 *     'PUT /contacts/35/lifecycle 200',
 *     'POST /contacts/35/labels 200',
 *   ]);
 * });
 * @module
 */
export { testHandler } from './test-handler.js';
export { testSchedule } from './test-schedule.js';
export type {
  TestCall,
  TestEventInput,
  TestHandlerOptions,
  TestHandlerResult,
  TestOutcome,
  TestRunOptions,
  TestRunResult,
  TestSource,
  TestScheduleOptions,
  TestScheduleOutcome,
  TestScheduleResult,
  TestWait,
} from './types.js';
export type { HandlerInput } from './input.js';
export type { LogLevel, LogLine } from './memory-log.js';
export type { SettingsInput } from './given-settings.js';
export type { StepRecord } from './steps.js';
export { createEvent, type DeepPartial, type EventOverrides } from './create-event.js';
export { sandboxClient } from './sandbox-api.js';
export { MemoryStepStore, type StepStore } from '../worker/index.js';
export { readDelivery, loadFixture, toEvent, signDelivery, DeliveryError, type Delivery, type SignedRequest } from './delivery.js';
export { signBody, sign } from './signing.js';
export { SIGNATURE_HEADER } from '../spec/index.js';
export { createSandbox, type RunningSandbox, type Sandbox, type SandboxOptions } from '../sandbox/index.js';
