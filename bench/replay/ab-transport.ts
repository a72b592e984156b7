// A/B of the replay HTTP transport (not a product path): the replay's own
// readInputs → httpTarget → runReplay (src/replay), with httpTarget's `fetch`
// option either the global fetch (what `switchyard replay` uses) or a minimal
// fetch-shaped function over node:http with a keep-alive Agent. Prints the
// replay summary as JSON, like `switchyard replay --json`.
//   node --import tsx bench/replay/ab-transport.ts '{"dir","url","secret","concurrency","transport":"fetch"|"http"}'
import { Agent, request } from 'node:http';
import { httpTarget, readInputs, runReplay } from '../../src/replay/index.js';

const o = JSON.parse(process.argv[2] ?? '{}') as { dir: string; url: string; secret: string; concurrency: number; transport: 'fetch' | 'http' };
const agent = new Agent({ keepAlive: true, maxSockets: o.concurrency });

const httpFetch = ((url: string, init: { method: string; body: Uint8Array; headers: Record<string, string> }) =>
  new Promise((resolve, reject) => {
    const req = request(url, { method: init.method, headers: { ...init.headers, 'content-length': String(init.body.byteLength) }, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, text: async () => text });
      });
      res.on('error', reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(init.body);
  })) as unknown as typeof fetch;

const items = await readInputs([o.dir], process.cwd());
const target = httpTarget({
  url: o.url, secret: o.secret, signatureHeader: 'x-service-signature',
  ...(o.transport === 'http' ? { fetch: httpFetch } : {}),
});
const summary = await runReplay(items, target, { concurrency: o.concurrency });
agent.destroy();
process.stdout.write(`${JSON.stringify(summary)}\n`);
