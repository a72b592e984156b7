// Load generator of bench/replay: autocannon driving the receiver with the same
// pre-signed, distinct bodies the replay sends (one per request, in order).
// Usage: node bench/replay/cannon.mjs '<json options>'   (prints a JSON result)
//   options: { url, file (ndjson of {body, sig}), header, connections, pipelining }
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const o = JSON.parse(process.argv[2]);
const items = readFileSync(o.file, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l));
let next = 0;
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const result = await autocannon({
  url: o.url,
  connections: o.connections,
  pipelining: o.pipelining ?? 1,
  amount: items.length,
  timeout: 30,
  requests: [
    {
      method: 'POST',
      setupRequest: (req) => {
        const it = items[next++ % items.length];
        return { ...req, body: it.body, headers: { 'content-type': 'application/json', [o.header]: it.sig } };
      },
    },
  ],
});
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
process.stdout.write(
  JSON.stringify({
    ms,
    sent: next,
    rate: (result['2xx'] / ms) * 1000,
    '2xx': result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodeStats: result.statusCodeStats,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuSec: (cpu.user + cpu.system) / 1e6,
  }) + '\n',
);
