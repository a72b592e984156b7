import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/command.js';
import { reconcileCommand } from '../../../src/cli/reconcile.js';
import { memoryIo } from '../../support/io.js';

const run = (...argv: string[]) =>
  reconcileCommand.run(argv, memoryIo({ WORKSPACE_API_URL: 'http://127.0.0.1:9/api/v1', WORKSPACE_API_TOKEN: 't' }));

describe('switchyard reconcile: arguments (checked before anything is reached)', () => {
  it('a bad --since says what was wrong and what is expected', async () => {
    await expect(run('--since', 'yesterday')).rejects.toThrow(UsageError);
    await expect(run('--since', 'yesterday')).rejects.toThrow(
      '--since: "yesterday" is neither an age nor a date; expected an age such as 30m, 6h or 2d, a date YYYY-MM-DD (UTC midnight) or a timestamp with an offset such as 2025-03-04T10:00:00Z or 2025-03-04T10:00:00+01:00',
    );
    await expect(run('--since', '2025-13-45')).rejects.toThrow(
      /--since: "2025-13-45" does not exist: there is no month 13; expected an age/,
    );
  });

  it('--since is required; --until must come after it', async () => {
    await expect(run()).rejects.toThrow(/--since is required/);
    await expect(run('--since', '1h', '--until', '2h')).rejects.toThrow(/--until .* must be after --since/);
    await expect(run('--since', '1h', '--until', 'soon')).rejects.toThrow(/--until: "soon" is neither an age nor a date; expected an age/);
  });

  it('--events: unknown names and events that are no webhooks are refused, naming what can be reconciled', async () => {
    await expect(run('--since', '1h', '--events', 'message.recieved')).rejects.toThrow(
      /unknown event "message.recieved"; did you mean "message.received"/,
    );
    await expect(run('--since', '1h', '--events', 'message.received,order.created')).rejects.toThrow(
      /order.created cannot be reconciled: not a webhook .* inferable: message.received.*conversation.assigned, contact.lifecycle_changed/,
    );
  });

  it('a window reaching past DEDUPE_TTL is refused: changes received before then would run again', async () => {
    await expect(run('--since', '8d')).rejects.toThrow(/--since .* reaches further back than DEDUPE_TTL \(168h\)/);
    await expect(
      reconcileCommand.run(
        ['--since', '2d'],
        memoryIo({ DEDUPE_TTL: '1d', WORKSPACE_API_URL: 'http://127.0.0.1:9/api/v1', WORKSPACE_API_TOKEN: 't' }),
      ),
    ).rejects.toThrow(/DEDUPE_TTL \(24h\)/);
  });

  it('without the API configured it says what to set', async () => {
    await expect(reconcileCommand.run(['--since', '1h'], memoryIo({}))).rejects.toThrow(/set WORKSPACE_API_URL and WORKSPACE_API_TOKEN/);
  });

  it('--help', async () => {
    const io = memoryIo({});
    expect(await reconcileCommand.run(['--help'], io)).toBe(0);
    expect(io.out()).toMatch(
      /From the snapshot the workers keep .*\n.*\nconversation.opened, conversation.assigned, contact.lifecycle_changed/,
    );
  });
});
