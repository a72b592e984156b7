import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** One POST's answer: status and body text. */
export interface PostAnswer {
  readonly status: number;
  readonly text: string;
}

/** Sends a body and resolves with the answer; rejects on network errors and timeouts. */
export type Poster = ((url: string, body: Uint8Array, headers: Record<string, string>) => Promise<PostAnswer>) & { close(): void };

/**
 * POSTs over node:http(s) with a keep-alive agent sized to the replay's
 * concurrency and a socket timeout. The global fetch costs about ten times
 * more CPU per request (a Request object and an AbortSignal each time), which
 * made the replay, not the receiver, the bottleneck (bench/README.md, Replay).
 */
export function keepAlivePoster(opts: { maxSockets: number; timeoutMs: number }): Poster {
  const agents = {
    'http:': new HttpAgent({ keepAlive: true, maxSockets: opts.maxSockets }),
    'https:': new HttpsAgent({ keepAlive: true, maxSockets: opts.maxSockets }),
  };
  const post = (url: string, body: Uint8Array, headers: Record<string, string>) =>
    new Promise<PostAnswer>((resolve, reject) => {
      const target = new URL(url);
      const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
      const agent = target.protocol === 'https:' ? agents['https:'] : agents['http:'];
      const req = send(target, { method: 'POST', agent, headers: { ...headers, 'content-length': String(body.byteLength) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.setTimeout(opts.timeoutMs, () => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  return Object.assign(post, {
    close: () => {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  });
}
