import { expect } from 'vitest';
import { defineHandler, HandlerDefinitionError } from '../../src/handler/define.js';

/** defineHandler as a `.js` module could call it: with anything. */
export const defineLoose = defineHandler as (def: unknown) => ReturnType<typeof defineHandler>;

/** The message of the HandlerDefinitionError that `def` is refused with (fails the test when it is accepted). */
export function definitionError(def: unknown): string {
  try {
    defineLoose(def);
  } catch (e) {
    expect(e).toBeInstanceOf(HandlerDefinitionError);
    return (e as Error).message;
  }
  throw new Error('expected defineHandler to throw');
}
