/** The worker's warning when it has no API says which setting is missing, never that a set one is unset. */
import { describe, expect, it } from 'vitest';
import { apiUnset } from '../../../src/runtime/worker-api.js';

describe('apiUnset', () => {
  it('names what is missing', () => {
    expect(apiUnset({ workspaceApiUrl: undefined, workspaceApiToken: undefined })).toBe(
      'WORKSPACE_API_URL and WORKSPACE_API_TOKEN are unset',
    );
    expect(apiUnset({ workspaceApiUrl: 'https://ws.example.test/api/v1', workspaceApiToken: undefined })).toBe(
      'WORKSPACE_API_TOKEN is unset (WORKSPACE_API_URL is https://ws.example.test/api/v1)',
    );
    expect(apiUnset({ workspaceApiUrl: undefined, workspaceApiToken: 'tok_secret' })).toBe(
      'WORKSPACE_API_URL is unset (WORKSPACE_API_TOKEN is set)',
    );
    expect(apiUnset({ workspaceApiUrl: undefined, workspaceApiToken: 'tok_secret' })).not.toContain('tok_secret');
  });
});
