import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { liveReceiver, recordReceiver } from '../../../src/cli/live-receiver.js';

// The record a running dev/start keeps of where it receives: followed only while its process runs.
describe('the live receiver record', () => {
  const dirs: string[] = [];
  const home = () => {
    const d = mkdtempSync(join(tmpdir(), 'sy-live-'));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('is written with the webhook URL, found while this process runs, removed by its own process', () => {
    const stateDir = home();
    const forget = recordReceiver({ stateDir, webhookPath: '/hooks' }, '/', 'dev', 'http://127.0.0.1:3300');
    expect(JSON.parse(readFileSync(join(stateDir, 'receiver.json'), 'utf8'))).toMatchObject({
      pid: process.pid,
      command: 'dev',
      url: 'http://127.0.0.1:3300/hooks',
    });
    expect(liveReceiver({ stateDir }, '/')).toMatchObject({ pid: process.pid, url: 'http://127.0.0.1:3300/hooks' });
    forget();
    expect(existsSync(join(stateDir, 'receiver.json'))).toBe(false);
    expect(liveReceiver({ stateDir }, '/')).toBeNull();
  });

  it('is ignored when its process is gone (a killed dev) or it is not a record', async () => {
    const stateDir = home();
    const gone = spawn(process.execPath, ['-e', '']);
    await new Promise((r) => gone.once('exit', r));
    writeFileSync(
      join(stateDir, 'receiver.json'),
      JSON.stringify({ pid: gone.pid, command: 'dev', url: 'http://127.0.0.1:3300/webhooks' }),
    );
    expect(liveReceiver({ stateDir }, '/')).toBeNull();
    // This pid, but another start time: the pid was recycled.
    writeFileSync(
      join(stateDir, 'receiver.json'),
      JSON.stringify({ pid: process.pid, since: 1, command: 'dev', url: 'http://127.0.0.1:3300/webhooks' }),
    );
    expect(liveReceiver({ stateDir }, '/')).toBeNull();
    writeFileSync(join(stateDir, 'receiver.json'), '{"pid":');
    expect(liveReceiver({ stateDir }, '/')).toBeNull();
  });

  it('creates the state directory when the process is the first to use it (`start` on REDIS_URL)', () => {
    const stateDir = join(home(), '.switchyard');
    const forget = recordReceiver({ stateDir, webhookPath: '/webhooks' }, '/', 'start', 'http://127.0.0.1:3301');
    expect(liveReceiver({ stateDir }, '/')).toMatchObject({ command: 'start', url: 'http://127.0.0.1:3301/webhooks' });
    forget();
    expect(existsSync(join(stateDir, 'receiver.json'))).toBe(false);
  });
});
