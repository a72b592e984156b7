import { describe, expect, it } from 'vitest';
import { handlerEnv, isSwitchyardSecret } from '../../../src/handler/env.js';

describe('handlerEnv', () => {
  it.each([
    'WEBHOOK_SECRETS',
    'WEBHOOK_SECRETS_FILE',
    'WORKSPACE_API_TOKEN',
    'WORKSPACE_API_TOKEN_FILE',
    'ADMIN_USER',
    'ADMIN_USER_FILE',
    'ADMIN_PASSWORD',
    'ADMIN_PASSWORD_FILE',
    'REDIS_URL',
    'REDIS_URL_FILE',
    'REDIS_PASSWORD',
    'REDIS_USERNAME',
    'REDIS_SENTINEL_PASSWORD',
    'SENTINEL_PASSWORD',
    'REDIS_TLS_KEY',
  ])('drops %s', (name) => {
    expect(isSwitchyardSecret(name)).toBe(true);
    expect(handlerEnv({ [name]: 'x', FOLLOW_UP_DAYS: '2' })).toEqual({ FOLLOW_UP_DAYS: '2' });
  });

  it.each([
    'FOLLOW_UP_DAYS',
    'WON_STAGE',
    'MY_API_TOKEN',
    'CRM_SECRET',
    'TEMPLATE_FILE',
    'WORKSPACE_API_URL',
    'LOG_LEVEL',
    'TZ',
    'NODE_ENV',
    'PATH',
  ])('keeps %s', (name) => {
    expect(isSwitchyardSecret(name)).toBe(false);
    expect(handlerEnv({ [name]: 'v' })).toEqual({ [name]: 'v' });
  });

  it('is pure: the input is unchanged, the result frozen', () => {
    const env = { WEBHOOK_SECRETS: 's', WON_STAGE: 'Customer' };
    const out = handlerEnv(env);
    expect(env).toEqual({ WEBHOOK_SECRETS: 's', WON_STAGE: 'Customer' });
    expect(Object.isFrozen(out)).toBe(true);
  });
});
