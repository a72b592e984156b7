/** testHandler says what the worker does with a failure on the handler's last allowed attempt: it is dead-lettered. */
import { describe, expect, it } from 'vitest';
import { defineHandler } from '../../../src/handler/define.js';
import { testHandler } from '../../../src/testing/index.js';

const flaky = defineHandler({
  id: 'flaky',
  on: ['lead.won'],
  retry: { attempts: 3 },
  handle: async () => {
    await Promise.resolve();
    throw new Error('flaky');
  },
});

describe('testHandler and the retry budget', () => {
  it('a retryable failure before the last attempt is a retry', async () => {
    expect(await testHandler(flaky, 'lead.won', { attempt: 2 })).toMatchObject({ outcome: 'retry', reason: 'Error: flaky' });
  });

  it('the same failure on the last attempt is dead, saying no retry is left', async () => {
    expect(await testHandler(flaky, 'lead.won', { attempt: 3 })).toMatchObject({
      outcome: 'dead',
      reason: 'Error: flaky (attempt 3 of 3: no retry left)',
    });
  });
});
