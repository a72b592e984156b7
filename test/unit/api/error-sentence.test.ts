import { describe, expect, it } from 'vitest';
import { errorFromResponse } from '../../../src/api/errors.js';
import { asSentence } from '../../../src/api/sentence.js';
import { classify } from '../../../src/worker/classify.js';

const unauthorized = (message: string | undefined) =>
  errorFromResponse({
    status: 401,
    body: message === undefined ? {} : { message },
    headers: new Headers(),
    hadIdempotencyKey: false,
    op: 'contacts.setLifecycle',
    nowMs: 0,
  });

describe('error messages followed by more text', () => {
  it.each([
    ['Unauthenticated.', 'Unauthenticated.'],
    ['Unauthenticated', 'Unauthenticated.'],
    ['Are you sure?', 'Are you sure?'],
    ['Stop!', 'Stop!'],
    ['and then…', 'and then…'],
    ['trailing space. ', 'trailing space.'],
    ['x.y: 401', 'x.y: 401.'],
  ])('asSentence(%j) → %j', (text, sentence) => {
    expect(asSentence(text)).toBe(sentence);
  });

  it('a 401 "Unauthenticated." pauses with one full stop before the advice, not two', () => {
    const verdict = classify(unauthorized('Unauthenticated.'));
    expect(verdict).toMatchObject({ kind: 'pause', code: 'unauthorized' });
    const reason = (verdict as { reason: string }).reason;
    expect(reason).toBe(
      'API token unusable (unauthorized): contacts.setLifecycle: 401 Unauthenticated. Replace WORKSPACE_API_TOKEN and restart, or run `switchyard dlq resume`',
    );
    expect(reason).not.toMatch(/\.\./);
  });

  it('a 401 without a service message still ends its sentence', () => {
    const reason = (classify(unauthorized(undefined)) as { reason: string }).reason;
    expect(reason).toMatch(/: contacts\.setLifecycle: 401\. Replace WORKSPACE_API_TOKEN/);
  });
});
