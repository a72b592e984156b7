// Summarises a V8 .cpuprofile (from `node --cpu-prof`) over the timed spans only, as run.ts wrote them
// with WINDOWS=<file.json> (the inbox fill and the untimed parts of a case are left out): top functions
// by self time, self time by package / file, and the Switchyard functions (src/) by self and by total
// (inclusive) time, and the inclusive time per src/ file. Each as % of the busy samples in the spans (all but
// `(idle)`: the profile samples wall time, so time the thread was descheduled by foreign load lands on
// whatever ran) and as CPU µs per delivery: that share of the process CPU run.ts measured in the spans
// (process.cpuUsage, all threads: an estimate that charges GC and libuv threads pro rata).
// Usage: [CASE=<case>] node bench/history/top-self-windows.mjs <file.cpuprofile> <windows.json> [topN]
// The profile's sample times and run.ts's process.hrtime are the same monotonic clock (µs).
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';

const [file, winFile, topArg] = process.argv.slice(2);
if (!file || !winFile) {
  process.stderr.write('usage: node bench/history/top-self-windows.mjs <file.cpuprofile> <windows.json> [topN]\n');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const prof = JSON.parse(readFileSync(file, 'utf8'));
const parsed = JSON.parse(readFileSync(winFile, 'utf8'));
const { deliveries } = parsed;
// CASE=<name>: only that case's spans (a profile of several cases, one at a time).
const windows = process.env.CASE ? parsed.windows.filter((w) => w.case === process.env.CASE) : parsed.windows;
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const where = (url) => {
  if (!url) return '(native/V8)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  if (url.startsWith('node:')) return url;
  return url.replace(/^file:\/\/.*?\/(dist|src|bench)\//, '$1/');
};
// tsx runs src/ through esbuild with minifyWhitespace (nearly every function is on line 1), so a src/
// frame's line is found by transforming the file the same way and reading the source map at its column.
const maps = new Map();
const srcLine = (cf) => {
  if (!maps.has(cf.url)) {
    try {
      const path = fileURLToPath(cf.url);
      const out = transformSync(readFileSync(path, 'utf8'), {
        target: `node${process.versions.node}`,
        loader: 'ts',
        format: 'esm',
        sourcemap: 'external',
        minifyWhitespace: true,
        keepNames: true,
        sourcefile: path,
      });
      maps.set(cf.url, new SourceMap(JSON.parse(out.map)));
    } catch {
      maps.set(cf.url, null);
    }
  }
  const e = maps.get(cf.url)?.findEntry(cf.lineNumber, cf.columnNumber);
  return e && e.originalLine !== undefined ? e.originalLine + 1 : `${cf.lineNumber + 1}:${cf.columnNumber + 1}`;
};
const keyOf = (cf) =>
  `${cf.functionName || '(anonymous)'}  ${where(cf.url)}:${where(cf.url).startsWith('src/') ? srcLine(cf) : cf.lineNumber + 1}`;
/** Switchyard's own code: src/ (through tsx) or the built dist/ (run.ts runs dist/). */
const ours = (file) => file.startsWith('src/') || file.startsWith('dist/');
const inWindow = (t) => windows.some((w) => t >= w.startUs && t <= w.endUs);
const self = new Map();
let ts = prof.startTime;
let inside = 0;
let all = 0;
for (let i = 0; i < prof.samples.length; i++) {
  ts += prof.timeDeltas[i] ?? 0;
  const dt = prof.timeDeltas[i + 1] ?? 0; // the time until the next sample is this sample's
  all += dt;
  if (!inWindow(ts)) continue;
  if (byId.get(prof.samples[i]).callFrame.functionName === '(idle)') continue;
  inside += dt;
  self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + dt);
}
const spans = windows.reduce((a, w) => a + (w.endUs - w.startUs), 0);
const n = deliveries * windows.length;
const fn = new Map();
const group = new Map();
const srcSelf = new Map();
const srcTotal = new Map();
const fileTotal = new Map();
for (const [id, t] of self) {
  const cf = byId.get(id).callFrame;
  const k = keyOf(cf);
  fn.set(k, (fn.get(k) ?? 0) + t);
  group.set(where(cf.url), (group.get(where(cf.url)) ?? 0) + t);
  if (ours(where(cf.url))) srcSelf.set(k, (srcSelf.get(k) ?? 0) + t);
  // Total time: every src/ function on the sample's stack, once per stack.
  const seen = new Set();
  for (let p = id; p !== undefined; p = parent.get(p)) {
    const pcf = byId.get(p).callFrame;
    const file = where(pcf.url);
    if (!ours(file)) continue;
    const pk = keyOf(pcf);
    if (!seen.has(pk)) {
      seen.add(pk);
      srcTotal.set(pk, (srcTotal.get(pk) ?? 0) + t);
    }
    if (!seen.has(file)) {
      seen.add(file);
      fileTotal.set(file, (fileTotal.get(file) ?? 0) + t);
    }
  }
}
const cpuUs = windows.reduce((a, w) => a + (w.cpuUs ?? NaN), 0);
const fmt = (t) => `${((100 * t) / inside).toFixed(1).padStart(5)}%  ${((t / inside) * (cpuUs / n)).toFixed(1).padStart(6)} µs/dlv`;
const list = (m, k = top) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .map(([name, t]) => `${fmt(t)}  ${name}`)
    .join('\n');
console.log(
  `spans: ${windows.length} × ${deliveries} deliveries, ${(spans / 1000).toFixed(0)} ms; busy samples in spans ${(inside / 1000).toFixed(0)} ms ` +
    `of ${(all / 1000).toFixed(0)} ms profiled; process CPU in spans ${(cpuUs / 1000).toFixed(0)} ms = ${(cpuUs / n).toFixed(0)} µs/delivery`,
);
console.log(`\nTop ${top} functions by self time (in spans):\n${list(fn)}`);
console.log(`\nSelf time by package / file:\n${list(group, 25)}`);
console.log(`\nSwitchyard src/ and dist/ functions by self time:\n${list(srcSelf)}`);
console.log(`\nSwitchyard src/ and dist/ functions by total (inclusive) time:\n${list(srcTotal)}`);
console.log(`\nSwitchyard src/ and dist/ files by total (inclusive) time:\n${list(fileTotal)}`);
