import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { deliveryId, eventBody } from '../../support/events.js';
import { requireTool, skipTool } from '../../support/tools.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobIdFor } from '../../../src/events/envelope.js';
import { EVENTS_QUEUE } from '../../../src/queue/names.js';
import { freePort } from '../../../src/redis/managed.js';
import { runCli, type CliProcess } from '../../support/cli.js';
import { uniquePrefix } from '../../support/redis.js';
import { deliver, TEST_SECRET, waitFor } from '../../support/service.js';

/**
 * REDIS_URL=rediss://: TLS to Redis, the server certificate signed by a
 * private CA that the process trusts through NODE_EXTRA_CA_CERTS (how an
 * operator adds a private CA to Node).
 */
describe.skipIf(skipTool('openssl'))('Redis over TLS (rediss://)', () => {
  requireTool('openssl');
  const dir = mkdtempSync(join(tmpdir(), 'sy-tls-'));
  const prefix = uniquePrefix('tls');
  let redisServer: ChildProcess;
  let proc: CliProcess;
  let redisPort: number;
  let url: string;

  beforeAll(async () => {
    const sh = (cmd: string) => {
      const r = spawnSync('sh', ['-c', cmd], { cwd: dir, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`${cmd}: ${r.stderr}`);
    };
    sh('openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 1 -subj "/CN=switchyard-test-ca"');
    sh('openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=localhost"');
    writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
    sh('openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 1 -extfile ext.cnf');
    redisPort = await freePort();
    redisServer = spawn(
      'redis-server',
      [
        '--port',
        '0',
        '--tls-port',
        String(redisPort),
        '--bind',
        '127.0.0.1',
        '--tls-cert-file',
        join(dir, 'server.crt'),
        '--tls-key-file',
        join(dir, 'server.key'),
        '--tls-ca-cert-file',
        join(dir, 'ca.crt'),
        '--tls-auth-clients',
        'no',
        '--save',
        '',
        '--appendonly',
        'yes',
        '--dir',
        dir,
      ],
      { stdio: 'ignore' },
    );
    const port = await freePort();
    url = `http://127.0.0.1:${port}/webhooks`;
    proc = runCli(['serve'], {
      WEBHOOK_SECRETS: TEST_SECRET,
      PORT: String(port),
      HOST: '127.0.0.1',
      REDIS_URL: `rediss://localhost:${redisPort}`,
      QUEUE_PREFIX: prefix,
      INGEST_PUMP: 'on',
      NODE_EXTRA_CA_CERTS: join(dir, 'ca.crt'),
    });
    await proc.waitFor(/receiver listening/, 20_000);
  }, 40_000);

  afterAll(async () => {
    await proc?.stop();
    redisServer?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('verifies, deduplicates and queues over a TLS connection', async () => {
    const body = eventBody('message.sent');
    const id = deliveryId(body);
    expect((await deliver(url, body)).status).toBe(202);
    expect((await deliver(url, body)).status).toBe(200);
    const redis = new Redis({
      host: 'localhost',
      port: redisPort,
      tls: { ca: readFileSync(join(dir, 'ca.crt')) },
      maxRetriesPerRequest: null,
    });
    const events = new Queue(EVENTS_QUEUE, { connection: redis, prefix });
    try {
      await waitFor(() => events.getJob(jobIdFor(id)));
    } finally {
      await events.close();
      redis.disconnect();
    }
  });
});
