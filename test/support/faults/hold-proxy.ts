/**
 * A proxy in front of the sandbox that can keep note writes from ever
 * reaching it. While `holding`, the first attempt of each note write (per
 * Idempotency-Key) is answered 500 and every later attempt (the client's
 * retry) is held open without an answer: the job is mid-retry, mid-call, and
 * the write is NOT applied. `release()` drops the held calls unanswered and
 * unforwarded, and from then on every call is passed through.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const NOTES = /^\/api\/v1\/conversations\/[^/]+\/notes$/;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding', 'host']);

export interface ForwardedWrite {
  /** Delivery id (the note body is `seen <id>`). */
  id: string;
  /** When the sandbox's answer came back (Date.now()). */
  at: number;
  status: number;
  replay: boolean;
}

export interface HoldProxy {
  /** Base URL to hand the worker as WORKSPACE_API_URL. */
  baseUrl: string;
  /** Note writes answered 500 while holding (first attempts). */
  readonly failed: Set<string>;
  /** Note writes held open right now (retries), by Idempotency-Key. */
  readonly held: Map<string, ServerResponse>;
  /** Every note write the sandbox answered, in order. */
  readonly writes: ForwardedWrite[];
  /** Drops the held calls (never forwarded) and passes everything through from now on. */
  release(): void;
  close(): Promise<void>;
}

export async function startHoldProxy(target: { url: string }): Promise<HoldProxy> {
  let holding = true;
  const failed = new Set<string>();
  const held = new Map<string, ServerResponse>();
  const writes: ForwardedWrite[] = [];

  const forward = async (req: IncomingMessage, body: Buffer, res: ServerResponse): Promise<void> => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && !HOP_BY_HOP.has(k)) headers[k] = v;
    const r = await fetch(`${target.url}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, ...(body.length > 0 ? { body } : {}) });
    const out = Buffer.from(await r.arrayBuffer());
    if (req.method === 'POST' && NOTES.test(req.url ?? '')) {
      const note = (JSON.parse(body.toString()) as { body?: string }).body ?? '';
      writes.push({
        id: note.replace(/^seen /, ''),
        at: Date.now(),
        status: r.status,
        replay: r.headers.get('idempotent-replay') === 'true',
      });
    }
    const resHeaders: Record<string, string> = {};
    r.headers.forEach((v, k) => {
      if (!HOP_BY_HOP.has(k)) resHeaders[k] = v;
    });
    res.writeHead(r.status, resHeaders).end(out);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const key = req.headers['idempotency-key'];
      if (holding && req.method === 'POST' && NOTES.test(req.url ?? '') && typeof key === 'string') {
        if (!failed.has(key)) {
          failed.add(key);
          res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Server Error' }));
        } else {
          held.set(key, res);
        }
        return;
      }
      forward(req, body, res).catch(() => res.destroy());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/api/v1`,
    failed,
    held,
    writes,
    release() {
      holding = false;
      for (const res of held.values()) res.destroy();
      held.clear();
    },
    close: () =>
      new Promise<void>((r) => {
        holding = false;
        for (const res of held.values()) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
