import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/command.js';
import { replayCommand } from '../../../src/cli/replay.js';
import { sendCommand } from '../../../src/cli/send.js';
import { memoryIo } from '../../support/io.js';

// Bad input to send and replay is bad usage (exit 2, main prints the message): never a silent drop.
describe('send and replay refuse what they cannot do as asked', () => {
  it('replay of a fixture whose body_base64 is not base64: usage error naming the file and the field, nothing sent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-replay-b64-'));
    const file = join(dir, 'damaged.json');
    writeFileSync(file, JSON.stringify({ format: 'switchyard.delivery/1', headers: {}, body_base64: 'not base64!' }));
    // Port 9 (discard): were anything sent, the delivery would fail instead of this usage error.
    const io = memoryIo({ WEBHOOK_SECRETS: 's' });
    const run = replayCommand.run([file, '--to', 'http://127.0.0.1:9/webhooks'], io);
    await expect(run).rejects.toBeInstanceOf(UsageError);
    await expect(run).rejects.toThrow(/damaged\.json: not a valid fixture: body_base64: expected standard base64/);
    expect(io.out()).toBe('');
  });

  it.each(['__proto__.polluted=1', 'data.__proto__.polluted=1', 'constructor.prototype.polluted=1'])(
    'send --set %s is refused, and nothing is polluted',
    async (set) => {
      const io = memoryIo({ WEBHOOK_SECRETS: 's' });
      const run = sendCommand.run(['lead.won', '--set', set, '--print'], io);
      await expect(run).rejects.toBeInstanceOf(UsageError);
      await expect(run).rejects.toThrow(/cannot be set \(it reaches an object's prototype or constructor, not a field of the delivery\)/);
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
      expect(io.out()).toBe('');
    },
  );
});
