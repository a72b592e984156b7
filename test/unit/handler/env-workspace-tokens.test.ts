import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, secretVariables } from '../../../src/config/index.js';
import { dropSecrets, handlerEnv, isSwitchyardSecret } from '../../../src/handler/env.js';

// A workspace's token named by `tokenEnv` in WORKSPACES_FILE is a secret like WORKSPACE_API_TOKEN: once the
// configuration is read, a process that loads handler modules drops it, and no handler's environment holds it.

describe('the tokenEnv variables of WORKSPACES_FILE', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sy-ws-tokens-'));
  const file = join(dir, 'workspaces.json');
  writeFileSync(
    file,
    JSON.stringify({
      workspaces: [
        { id: 'acme', apiUrl: 'https://api.example.com/api/v1', tokenEnv: 'ACME_TOKEN', secrets: ['whsec_a'] },
        { id: 'globex', apiUrl: 'https://api.example.com/api/v1', token: 'tok_inline', secrets: ['whsec_g'] },
      ],
    }),
  );

  it('are named by secretVariables, dropped by dropSecrets and kept out of every later handlerEnv', () => {
    const env: Record<string, string | undefined> = { WORKSPACES_FILE: file, ACME_TOKEN: 'tok_acme_VALUE', FOLLOW_UP_DAYS: '3' };
    const config = loadConfig(env);
    expect(config.workspaces?.[0]?.token).toBe('tok_acme_VALUE');
    expect(secretVariables(config)).toEqual(['ACME_TOKEN']);

    const dropped = dropSecrets(env, secretVariables(config));
    expect(dropped).toContain('ACME_TOKEN');
    expect(env).toEqual({ FOLLOW_UP_DAYS: '3' });
    // A copy of the environment taken before the drop (a CLI's io.env) does not hand it to handlers either.
    expect(handlerEnv({ ACME_TOKEN: 'tok_acme_VALUE', FOLLOW_UP_DAYS: '3' })).toEqual({ FOLLOW_UP_DAYS: '3' });
    expect(isSwitchyardSecret('ACME_TOKEN')).toBe(true);
  });

  it('WORKSPACES_FILE itself (the file holds every token and secret) is kept from handler code', () => {
    const env: Record<string, string | undefined> = { WORKSPACES_FILE: file, FOLLOW_UP_DAYS: '3' };
    expect(dropSecrets(env)).toEqual(['WORKSPACES_FILE']);
    expect(handlerEnv({ WORKSPACES_FILE: file, FOLLOW_UP_DAYS: '3' })).toEqual({ FOLLOW_UP_DAYS: '3' });
  });

  it('a deployment of one declares none', () => {
    expect(secretVariables(loadConfig({}))).toEqual([]);
  });
});
