// Closed-loop HTTP/1.1 load generator for bench/ingest (runs in its own process).
//
// N keep-alive connections on raw sockets, one request in flight per
// connection (no pipelining). Every request is a DISTINCT ~500-byte
// `message.received` envelope (its own envelope id), signed with
// HMAC-SHA256 (`sha256=<hex>`) in the signature header. Raw sockets and a
// minimal response parser keep the generator's own CPU cost low: on a
// 2-core machine it shares the CPU with the server under test (and Redis).
//
// Usage (normally spawned by run.ts):
//   node bench/ingest/loadgen.mjs '<json options>'
// Options: { host, port, path, connections, warmupSec, durationSec, secret,
//            header, runId, acceptedIdsFile?, requests? }
// `requests`: send this many in all and stop (a fixed amount of work, so a
// whole-process timer measures it: `time node bench/ingest/loadgen.mjs ...`);
// the duration then only bounds it.
// Prints one JSON line with the result to stdout.
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';

const o = JSON.parse(process.argv[2] ?? '{}');
const host = o.host ?? '127.0.0.1';
const path = o.path ?? '/webhooks';
const connections = o.connections ?? 50;
const warmupMs = (o.warmupSec ?? 3) * 1000;
const durationMs = (o.durationSec ?? 10) * 1000;
const secret = o.secret ?? 'bench-secret';
const header = o.header ?? 'X-Service-Signature';
const runId = o.runId ?? Date.now().toString(36);
const requests = o.requests ?? Infinity;

const TEXTS = [
  'Hi! Is my order #1043 out for delivery yet? 🚚',
  'Can I change the delivery address to Rua Augusta 27, 3º esq., Lisboa?',
  'Thanks, the invoice arrived. Could you also send it as PDF please?',
  'Olá, queria saber se ainda têm o modelo azul em stock no tamanho M.',
];

let seq = 0;
/** A distinct, realistic ~500-byte `message.received` envelope. */
function nextBody() {
  const n = seq++;
  const id = `evt_${runId}_${n.toString(36).padStart(8, '0')}`;
  const ts = new Date(Date.UTC(2025, 2, 4, 9, 58, 12) + n * 137)
    .toISOString()
    .replace('.000Z', '+00:00')
    .replace(/\.\d{3}Z$/, '+00:00');
  const body = JSON.stringify({
    id,
    event: 'message.received',
    created_at: ts,
    workspace_id: 'ws_7Q2M8V4D9X',
    data: {
      id: 90211 + n,
      conversation_id: 812 + (n % 977),
      type: 'message',
      direction: 'inbound',
      channel: 'whatsapp',
      sender_type: 'contact',
      contact_id: 4410 + (n % 313),
      user_id: null,
      body: TEXTS[n % TEXTS.length],
      content_type: 'text',
      external_id: `wamid.HBgMMzUxOTEyMzQ1Njc4FQIAEhgg${((n * 2654435761) >>> 0).toString(16).toUpperCase().padStart(8, '0')}A44F8BB27`,
      attachments: [],
      status: null,
      created_at: ts,
    },
  });
  return { id, body: Buffer.from(body, 'utf8') };
}

function request(port) {
  const { id, body } = nextBody();
  const sig = 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
  const head =
    `POST ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nContent-Type: application/json\r\n` +
    `User-Agent: WorkspaceWebhooks/1.0\r\n${header}: ${sig}\r\nContent-Length: ${body.length}\r\n\r\n`;
  return { id, bytes: Buffer.concat([Buffer.from(head, 'latin1'), body]) };
}

const start = performance.now();
const measureFrom = start + warmupMs;
const measureTo = measureFrom + durationMs;
const latencies = []; // ms, responses completed inside the measurement window (requests sent after warm-up)
const statusAll = {}; // every response, warm-up included
const statusMeasured = {};
const accepted = o.acceptedIdsFile ? [] : null;
let errors = 0;
let finished = 0;

function runConnection(port) {
  return new Promise((resolve) => {
    const sock = connect({ host, port, noDelay: true });
    let buf = Buffer.alloc(0);
    let cur = null;
    let sentAt = 0;
    const send = () => {
      if (seq >= requests || performance.now() >= measureTo) {
        sock.end();
        return resolve();
      }
      cur = request(port);
      sentAt = performance.now();
      sock.write(cur.bytes);
    };
    sock.on('connect', send);
    sock.on('error', () => {
      errors++;
      resolve();
    });
    sock.on('close', () => resolve());
    sock.on('data', (chunk) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const headText = buf.toString('latin1', 0, end);
        const status = Number(headText.slice(9, 12));
        const m = /\r\ncontent-length:\s*(\d+)/i.exec(headText);
        let total;
        if (m) {
          total = end + 4 + Number(m[1]);
          if (buf.length < total) return;
        } else if (/\r\ntransfer-encoding:\s*chunked/i.test(headText)) {
          const term = buf.indexOf('0\r\n\r\n', end + 4);
          if (term < 0) return;
          total = term + 5;
        } else {
          total = end + 4;
        }
        buf = buf.subarray(total);
        const now = performance.now();
        statusAll[status] = (statusAll[status] ?? 0) + 1;
        if (accepted && status === 202) accepted.push(cur.id);
        if (sentAt >= measureFrom && now <= measureTo) {
          latencies.push(now - sentAt);
          statusMeasured[status] = (statusMeasured[status] ?? 0) + 1;
        }
        finished++;
        send();
      }
    });
  });
}

const cpu0 = process.cpuUsage();
await Promise.all(Array.from({ length: connections }, () => runConnection(o.port)));

const sorted = Float64Array.from(latencies).sort();
const pct = (p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN);
if (accepted) writeFileSync(o.acceptedIdsFile, accepted.join('\n'));
process.stdout.write(
  JSON.stringify({
    connections,
    durationSec: durationMs / 1000,
    measured: sorted.length,
    rps: sorted.length / (durationMs / 1000),
    p50: pct(50),
    p90: pct(90),
    p99: pct(99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
    statusMeasured,
    statusAll,
    totalResponses: finished,
    socketErrors: errors,
    sent: seq,
    cpuSec: ((u) => (u.user + u.system) / 1e6)(process.cpuUsage(cpu0)),
  }) + '\n',
);
