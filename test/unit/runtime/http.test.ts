import { connect } from 'node:net';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { listen } from '../../../src/runtime/http.js';

/** Opens a raw connection, sends the start of a request whose headers never end, and resolves with what the server answers. */
function partialHeaders(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write('POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Service-Signature: sha256='),
    );
    let got = '';
    socket.on('data', (chunk) => {
      got += String(chunk);
    });
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
  });
}

describe('listen', () => {
  // The configured headers timeout is what cuts a slow client off: node checks for it only every
  // connectionsCheckingInterval (30 s by default), which listen() sets from the timeout. The test
  // waits for the 408 itself (its own timeout is only a backstop, far under node's 30 s default).
  it('answers 408 to headers that do not finish, once the configured headers timeout has run', { timeout: 15_000 }, async () => {
    const app = new Hono().post('/webhooks', (c) => c.text('ok'));
    const server = await listen(app, { host: '127.0.0.1', port: 0, headersTimeoutMs: 200 });
    try {
      expect(server.server.headersTimeout).toBe(200);
      const answer = await partialHeaders(server.port);
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      await server.close(100);
    }
  });
});
