/** `switchyard dev`'s plan: which environment the service gets beside the sandbox. */
import { describe, expect, it } from 'vitest';
import { devPlan, SANDBOX_TOKEN } from '../../../src/runtime/dev-env.js';

const base = { WEBHOOK_SECRETS: 'whsec_test', PORT: '3100', SANDBOX_PORT: '4100' };

describe('devPlan', () => {
  it('points the handlers at the sandbox with the sandbox token, never a real token left in the shell', () => {
    const plan = devPlan({ ...base, WORKSPACE_API_TOKEN: 'real_secret_token' }, '/nonexistent');
    expect(plan.env['WORKSPACE_API_URL']).toBe('http://127.0.0.1:4100/api/v1');
    expect(plan.env['WORKSPACE_API_TOKEN']).toBe(SANDBOX_TOKEN);
    expect(plan.sandbox).toMatchObject({ port: 4100, token: SANDBOX_TOKEN, webhookUrl: 'http://127.0.0.1:3100/webhooks' });
    expect(plan.notes.join('\n')).toMatch(/WORKSPACE_API_TOKEN is set but WORKSPACE_API_URL is not/);
    expect(plan.notes.join('\n')).not.toContain('real_secret_token');
  });

  it('leaves a real workspace alone: with WORKSPACE_API_URL set there is no sandbox and the token is kept', () => {
    const plan = devPlan({ ...base, WORKSPACE_API_URL: 'https://ws.example.test/api/v1', WORKSPACE_API_TOKEN: 'real_secret_token' }, '/nonexistent');
    expect(plan.sandbox).toBeUndefined();
    expect(plan.env['WORKSPACE_API_TOKEN']).toBe('real_secret_token');
    expect(plan.notes.join('\n')).not.toContain('real_secret_token');
  });

  it('binds loopback unless HOST is set', () => {
    expect(devPlan(base, '/nonexistent').env['HOST']).toBe('127.0.0.1');
    expect(devPlan({ ...base, HOST: '0.0.0.0' }, '/nonexistent').env['HOST']).toBe('0.0.0.0');
  });
});
