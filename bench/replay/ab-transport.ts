// A/B of the replay HTTP transport (not a product path): the replay's own
// readInputs → httpTarget → runReplay (src/replay), with httpTarget's transport
// either the global fetch (what `switchyard replay` used before) or its own
// default, a keep-alive node:http poster. Prints the replay summary as JSON,
// like `switchyard replay --json`.
//   node --import tsx bench/replay/ab-transport.ts '{"dir","url","secret","concurrency","transport":"fetch"|"http"}'
import { httpTarget, readInputs, runReplay } from '../../src/replay/index.js';

const o = JSON.parse(process.argv[2] ?? '{}') as {
  dir: string;
  url: string;
  secret: string;
  concurrency: number;
  transport: 'fetch' | 'http';
};
const fetchPoster = Object.assign(
  async (url: string, body: Uint8Array, headers: Record<string, string>) => {
    const res = await fetch(url, { method: 'POST', body, headers, signal: AbortSignal.timeout(30_000) });
    return { status: res.status, text: await res.text() };
  },
  { close: () => undefined },
);

const items = await readInputs([o.dir], process.cwd());
const target = httpTarget({
  url: o.url,
  secret: o.secret,
  signatureHeader: 'x-service-signature',
  // 'fetch': the global fetch, as the replay used before; 'http': the replay's own default (keep-alive node:http).
  ...(o.transport === 'fetch' ? { post: fetchPoster } : { maxSockets: o.concurrency }),
});
const summary = await runReplay(items, target, { concurrency: o.concurrency });
target.close();
process.stdout.write(`${JSON.stringify(summary)}\n`);
