/**
 * `switchyard/testing`: what a handler's tests use today. Deliveries (the
 * package's fixtures, a captured file, the event a handler receives for
 * one), signing a delivery as the workspace does, and the sandbox.
 * @module
 */
export { readDelivery, loadFixture, toEvent, signDelivery, DeliveryError, type Delivery, type SignedRequest } from './delivery.js';
export { sign } from '../signature.js';
export { SIGNATURE_HEADER } from '../spec/webhooks.js';
export { createSandbox, type RunningSandbox, type Sandbox, type SandboxOptions } from '../sandbox/index.js';
