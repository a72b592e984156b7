import { describe, expect, test } from 'vitest';
import { durationOption } from '../../../src/util/index.js';

describe('durationOption', () => {
  test.each([
    [250, false, 250],
    ['15m', false, 900_000],
    [0, true, 0],
    ['0s', true, 0],
    [1.6, false, 2],
  ])('%j (zero allowed: %s) is %j ms', (value, allowZero, ms) => {
    expect(durationOption(value, allowZero)).toBe(ms);
  });

  test.each([[0], ['0s'], ['0ms'], [-5], [Number.NaN], [Infinity], ['soon'], [{}], [null]])('%j is no positive duration', (value) => {
    expect(durationOption(value, false)).toBeNull();
  });

  test('a negative number is refused even where zero is allowed', () => {
    expect(durationOption(-1, true)).toBeNull();
  });
});
