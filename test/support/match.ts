import { expect } from 'vitest';

/**
 * vitest's asymmetric matchers, typed `unknown` instead of vitest's `any`: the
 * same matchers for a property inside the object given to toEqual or
 * toMatchObject, where an `any` would be an unsafe assignment.
 */
export const match = {
  any: (constructor: unknown): unknown => expect.any(constructor),
  stringContaining: (expected: string): unknown => expect.stringContaining(expected),
  stringMatching: (expected: string | RegExp): unknown => expect.stringMatching(expected),
};
