import { z } from 'zod';
import { bytesOf, textOrBase64 } from './body.js';

/**
 * A captured delivery, as stored under `fixtures/` and written by capture:
 * the request's headers and its exact raw body. `body` holds the bytes as
 * UTF-8 text; bodies that are not valid UTF-8 use `body_base64` instead.
 * Signature headers are never stored: replay re-signs with its own secret.
 */
/**
 * Standard base64, padded (what capture writes). Buffer.from(…, 'base64') is no
 * check: it skips what it cannot read, so a damaged body would be replayed as
 * other bytes.
 */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export const Fixture = z
  .looseObject({
    format: z.literal('switchyard.delivery/1').optional(),
    description: z.string().optional(),
    received_at: z.string().optional(),
    method: z.string().default('POST'),
    path: z.string().optional(),
    headers: z.record(z.string(), z.string()).default({}),
    body: z.string().optional(),
    body_base64: z
      .string()
      .regex(BASE64, 'expected standard base64 (A-Z, a-z, 0-9, + and /, padded with = to a multiple of 4 characters)')
      .optional(),
  })
  .refine((f) => (f.body === undefined) !== (f.body_base64 === undefined), {
    message: 'expected exactly one of "body" (UTF-8 text) or "body_base64"',
  });
export type Fixture = z.infer<typeof Fixture>;

/** Header names never written to a fixture (secrets and signatures). */
const DROPPED_HEADERS = /^(authorization|cookie|x-service-signature|x-hub-signature(-256)?|.*signature.*|.*token.*|.*secret.*)$/i;

/** The exact bytes of a fixture's body. */
export function fixtureBytes(f: Fixture): Buffer {
  return bytesOf(f.body, f.body_base64);
}

/** Builds a fixture from a received request; non-UTF-8 bodies are kept as base64. */
export function toFixture(input: {
  bytes: Uint8Array;
  headers: Record<string, string>;
  receivedAt: string;
  path?: string;
  description?: string;
}): Fixture {
  const kept = textOrBase64(input.bytes);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(input.headers)) {
    if (!DROPPED_HEADERS.test(k)) headers[k.toLowerCase()] = v;
  }
  return {
    format: 'switchyard.delivery/1',
    ...(input.description ? { description: input.description } : {}),
    received_at: input.receivedAt,
    method: 'POST',
    ...(input.path ? { path: input.path } : {}),
    headers,
    ...('text' in kept ? { body: kept.text } : { body_base64: kept.base64 }),
  };
}
