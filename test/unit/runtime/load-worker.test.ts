import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { HandlerDefinitionError } from '../../../src/handler/index.js';
import { loadWorker } from '../../../src/runtime/worker.js';
import { memoryLogger } from '../../support/service.js';

// loadWorker reads the handler modules before Redis is touched: a schedule naming a workspace the deployment does
// not serve stops start-up there (no Redis at all in this test: REDIS_URL points nowhere and is never used).

const HANDLERS = fileURLToPath(new URL('../../support/handlers/schedule-typo', import.meta.url));

describe('loadWorker', () => {
  it('refuses a schedule whose workspaces name one the WORKSPACES_FILE does not, before Redis', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-load-worker-'));
    const file = join(dir, 'workspaces.json');
    const ws = (id: string) => ({ id, apiUrl: 'http://127.0.0.1:9/api/v1', token: `tok_${id}`, secrets: [`whsec_${id}`] });
    writeFileSync(file, JSON.stringify({ workspaces: [ws('acme'), ws('beta')] }));
    const config = loadConfig({ WORKSPACES_FILE: file, HANDLERS_DIR: HANDLERS, REDIS_URL: 'redis://127.0.0.1:9' });
    const err = await loadWorker(config, memoryLogger().log, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HandlerDefinitionError);
    expect((err as Error).message).toContain(
      'schedule "nightly": "workspaces" names "betta", which is not a workspace of this deployment (did you mean "beta"?)',
    );
  });
});
