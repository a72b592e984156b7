import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { requireTool, skipTool } from '../../support/tools.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * No Docker engine runs here, so images are not built; the compose file is
 * validated by Debian's docker-compose (`config` needs no engine) and the
 * Dockerfile is checked for what production needs.
 */
describe('containers', () => {
  it.skipIf(skipTool('docker-compose'))('docker-compose.yml is valid and wires redis, receiver, worker and a dev-profile sandbox', () => {
    requireTool('docker-compose');
    const env = { ...process.env, WEBHOOK_SECRETS: 'compose-check' };
    const config = spawnSync('docker-compose', ['--profile', 'dev', 'config'], { cwd: ROOT, env, encoding: 'utf8' });
    expect(config.stderr).not.toMatch(/error/i);
    expect(config.status).toBe(0);
    const services = spawnSync('docker-compose', ['--profile', 'dev', 'config', '--services'], { cwd: ROOT, env, encoding: 'utf8' });
    expect(services.stdout.split('\n').filter(Boolean).sort()).toEqual(['receiver', 'redis', 'sandbox', 'worker']);
    expect(config.stdout).toMatch(/appendonly/);
    expect(config.stdout).toMatch(/noeviction/);
    expect(config.stdout).toMatch(/- serve/);
    expect(config.stdout).toMatch(/- work/);
    // Without the secret, compose refuses to render rather than start a receiver that cannot verify.
    const missing = spawnSync('docker-compose', ['config'], { cwd: ROOT, env: { ...process.env, WEBHOOK_SECRETS: '' }, encoding: 'utf8' });
    expect(missing.status).not.toBe(0);
  });

  it('Dockerfile is multi-stage, installs production dependencies only, runs as non-root with a health check', () => {
    const dockerfile = readFileSync(`${ROOT}/Dockerfile`, 'utf8');
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n?.*\/healthz/m);
  });
});
