// Summarises a V8 .cpuprofile (from `node --cpu-prof`): top functions by self
// time, and self time grouped by package / source file.
// Usage: node bench/ingest/top-self.mjs <file.cpuprofile> [topN]
import { readFileSync } from 'node:fs';

const [file, topArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node bench/ingest/top-self.mjs <file.cpuprofile> [topN]\n');
  process.exit(2);
}
const top = Number(topArg ?? 30);
const prof = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = prof.timeDeltas;
for (let i = 0; i < prof.samples.length; i++) {
  const id = prof.samples[i];
  self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const fn = new Map();
const group = new Map();
const where = (url) => {
  if (!url) return '(native/V8)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  if (url.startsWith('node:')) return url;
  return url.replace(/^file:\/\/.*?\/(dist|src|bench)\//, '$1/');
};
for (const [id, t] of self) {
  const n = byId.get(id);
  const cf = n.callFrame;
  const key = `${cf.functionName || '(anonymous)'}  ${where(cf.url)}:${cf.lineNumber + 1}`;
  fn.set(key, (fn.get(key) ?? 0) + t);
  const g = where(cf.url);
  group.set(g, (group.get(g) ?? 0) + t);
}
const pct = (t) => ((100 * t) / total).toFixed(1).padStart(5) + '%';
console.log(`total sampled: ${(total / 1000).toFixed(0)} ms\n\nTop ${top} functions by self time:`);
for (const [k, t] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(t)}  ${k}`);
console.log('\nSelf time by package / file:');
for (const [k, t] of [...group].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${pct(t)}  ${k}`);
