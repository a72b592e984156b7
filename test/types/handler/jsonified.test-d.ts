import { describe, expectTypeOf, test } from 'vitest';
import type { Jsonified } from '../../../src/handler/define.js';
import type { Contact } from '../../../src/spec/schemas/contact.js';

describe('Jsonified: the type of a value after a JSON round trip', () => {
  test('primitives stay; a Date becomes its string; toJSON is honoured', () => {
    expectTypeOf<Jsonified<string>>().toEqualTypeOf<string>();
    expectTypeOf<Jsonified<42 | 'a' | null | boolean>>().toEqualTypeOf<42 | 'a' | null | boolean>();
    expectTypeOf<Jsonified<Date>>().toEqualTypeOf<string>();
    expectTypeOf<Jsonified<{ toJSON(): { v: number } }>>().toEqualTypeOf<{ v: number }>();
    expectTypeOf<Jsonified<URL>>().toEqualTypeOf<string>();
  });

  test('undefined, functions and symbols are dropped from objects; optional when they only may be there', () => {
    type In = {
      at: Date;
      gone: undefined;
      fn: () => void;
      sym: symbol;
      maybe?: number;
      either: string | undefined;
      orFn: number | (() => void);
      [Symbol.iterator]: number;
    };
    expectTypeOf<Jsonified<In>>().toEqualTypeOf<{ at: string; maybe?: number; either?: string; orFn?: number }>();
  });

  test('nested objects and arrays; dropped array items become null; tuples keep their places', () => {
    type In = { list: { when: Date; n?: number }[]; pair: readonly [Date, undefined]; sparse: (string | undefined)[] };
    expectTypeOf<Jsonified<In>>().toEqualTypeOf<{
      list: { when: string; n?: number }[];
      pair: [string, null];
      sparse: (string | null)[];
    }>();
  });

  test('a Map or a Set becomes an empty object; numeric keys become strings; a class keeps its data, not its methods', () => {
    expectTypeOf<Jsonified<Map<string, number>>>().toEqualTypeOf<Record<string, never>>();
    expectTypeOf<Jsonified<Set<number>>>().toEqualTypeOf<Record<string, never>>();
    expectTypeOf<Jsonified<{ 1: 'one' }>>().toEqualTypeOf<{ '1': 'one' }>();
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
      norm(): number {
        return Math.hypot(this.x, this.y);
      }
    }
    expectTypeOf<Jsonified<Point>>().toEqualTypeOf<{ x: number; y: number }>();
  });

  test('top level: undefined stays undefined, unknown stays unknown, a bigint cannot be stored', () => {
    expectTypeOf<Jsonified<undefined>>().toEqualTypeOf<undefined>();
    expectTypeOf<Jsonified<void>>().toEqualTypeOf<undefined>();
    expectTypeOf<Jsonified<unknown>>().toEqualTypeOf<unknown>();
    expectTypeOf<Jsonified<bigint>>().toEqualTypeOf<never>();
  });

  test('an API resource keeps its fields (its index signature does not swallow them)', () => {
    expectTypeOf<Jsonified<Contact>['id']>().toEqualTypeOf<Contact['id']>();
    expectTypeOf<Jsonified<Contact>['name']>().toEqualTypeOf<Contact['name']>();
  });
});
