// bench/dev: how long `switchyard dev` takes to pick up a saved handler.
//
//   node --import tsx bench/dev/run.ts          (from the repository root)
//
// A project of its own in a temporary directory (node_modules/switchyard is
// this repository, HANDLERS_DIR ./handlers with one handler that writes an
// internal note `vN: <message>`), `switchyard dev` in it (managed
// redis-server, in-process sandbox, as a user runs it). Then N times:
//   1. write handlers/note.ts as version N                        → t0
//   2. the `dev: reloaded handlers: …` line reaches stdout           → t1
//   3. a customer writes through the sandbox (/_sandbox/inbound: a signed
//      message.received to the receiver, a job, the handler, an API call);
//      the note `vN: …` appears in the sandbox's request log            → t2
// Reported: save → reload line (t1 − t0), save → first delivery handled by the
// new version (t2 − t0), and the reload's own figure (the "(N ms)" of the line:
// loading every module afresh and parsing settings). Median and p95 (nearest rank).
//
// Knobs: SAVES=10 PAUSE_MS=300 SKIP_BUILD=1 RESULTS=<file.json>
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, ROOT, build, freePort, log, machine, sleep, start, stopAll, until } from '../lib/proc.js';

const SAVES = Number(process.env.SAVES ?? 10);
const PAUSE_MS = Number(process.env.PAUSE_MS ?? 300);
const scratch = mkdtempSync(join(tmpdir(), 'switchyard-bench-dev-'));

const handler = (version: number): string => `import { defineHandler } from 'switchyard';

export default defineHandler({
  id: 'note',
  on: ['message.received'],
  abilities: ['conversations:write'],
  async handle(event, ctx) {
    await ctx.api.notes.create(event.data.conversation_id, { body: \`v${version}: \${event.data.body}\` });
  },
});
`;

const rank = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? NaN;
};
const summary = (xs: number[]) => ({ median: rank(xs, 0.5), p95: rank(xs, 0.95), min: Math.min(...xs), max: Math.max(...xs) });

async function main(): Promise<void> {
  build();
  const project = join(scratch, 'project');
  mkdirSync(join(project, 'handlers'), { recursive: true });
  mkdirSync(join(project, 'node_modules'));
  symlinkSync(ROOT, join(project, 'node_modules', 'switchyard'), 'dir');
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'bench-dev', private: true, type: 'module' }));
  writeFileSync(join(project, 'handlers', 'note.ts'), handler(0));
  const [port, sandboxPort] = [await freePort(), await freePort()];
  const sandbox = `http://127.0.0.1:${sandboxPort}`;

  const dev = start(process.execPath, [BIN, 'dev'], {
    name: 'dev',
    cwd: project,
    keepStdout: true,
    stderr: false,
    env: { PORT: String(port), SANDBOX_PORT: String(sandboxPort), SWITCHYARD_HOME: join(scratch, 'home'), LOG_LEVEL: 'warn' },
  });
  const reloads: { at: number; ms: number }[] = [];
  dev.stdout?.on('data', (d: Buffer) => {
    const at = performance.now();
    for (const m of d.toString().matchAll(/dev: reloaded handlers: \S+ \((\d+) ms\)/g)) reloads.push({ at, ms: Number(m[1]) });
  });
  await until(
    'switchyard dev',
    async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok && (await fetch(`${sandbox}/_sandbox`)).ok,
    60_000,
  );
  const conversation = ((await (await fetch(`${sandbox}/_sandbox/workspaces`)).json()) as { data: { conversation_ids: number[] }[] })
    .data[0]!.conversation_ids[0]!;
  const noted = async (body: string): Promise<boolean> => {
    const r = (await (await fetch(`${sandbox}/_sandbox/requests?method=POST&path=/conversations/*/notes`)).json()) as {
      data: { body: { body?: string } | null }[];
    };
    return r.data.some((q) => q.body?.body === body);
  };

  const toLine: number[] = [];
  const toHandled: number[] = [];
  const own: number[] = [];
  for (let i = 1; i <= SAVES; i++) {
    await sleep(PAUSE_MS);
    const seen = reloads.length;
    const t0 = performance.now();
    writeFileSync(join(project, 'handlers', 'note.ts'), handler(i));
    await until(`reload ${i}`, async () => reloads.length > seen, 10_000, 1);
    const line = reloads[seen]!;
    await fetch(`${sandbox}/_sandbox/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ conversation_id: conversation, body: `save ${i}` }),
    });
    await until(`note v${i}`, () => noted(`v${i}: save ${i}`), 10_000, 5);
    const t2 = performance.now();
    toLine.push(line.at - t0);
    toHandled.push(t2 - t0);
    own.push(line.ms);
    log(
      `save ${i}: reload line ${(line.at - t0).toFixed(0)} ms (reload itself ${line.ms} ms), first delivery handled by v${i} ${(t2 - t0).toFixed(0)} ms`,
    );
  }
  const result = {
    date: new Date().toISOString(),
    machine: machine(),
    saves: SAVES,
    saveToReloadLineMs: summary(toLine),
    saveToHandledMs: summary(toHandled),
    reloadItselfMs: summary(own),
  };
  const f = (s: ReturnType<typeof summary>) =>
    `median ${s.median.toFixed(0)} ms, p95 ${s.p95.toFixed(0)} ms (min ${s.min.toFixed(0)}, max ${s.max.toFixed(0)})`;
  process.stdout.write(`${result.date} — ${result.machine}\n`);
  process.stdout.write(`save → "reloaded handlers" line:        ${f(result.saveToReloadLineMs)}\n`);
  process.stdout.write(`save → first delivery by new version: ${f(result.saveToHandledMs)}\n`);
  process.stdout.write(`reload itself (load + settings):      ${f(result.reloadItselfMs)}\n`);
  if (process.env.RESULTS) writeFileSync(process.env.RESULTS, JSON.stringify(result, null, 2));
}

try {
  await main();
} finally {
  await stopAll();
  rmSync(scratch, { recursive: true, force: true });
}
