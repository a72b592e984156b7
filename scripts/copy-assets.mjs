// Copies the files the code reads at run time besides its modules (the Lua
// scripts, `src/**/*.lua`) into dist/ at the same paths, and removes what in
// dist/ has no source any more: copies of deleted scripts (a stale script
// would be refused as unregistered) and tsc's outputs of deleted modules (tsc
// never deletes them, and `files: ["dist"]` would pack them). Part of
// `npm run build`; plain Node, no shell tools.
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
const dist = join(root, 'dist');
const isAsset = (f) => f.endsWith('.lua');
const list = (dir) => (existsSync(dir) ? readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter(isAsset) : []);

const assets = list(src);
const wanted = new Set(assets);
for (const f of list(dist)) if (!wanted.has(f)) rmSync(join(dist, f));

/** The module a tsc output was emitted from: `a/b.js`, `a/b.js.map`, `a/b.d.ts`, `a/b.d.ts.map` ← `a/b.ts`. */
const OUTPUT = /\.(js|js\.map|d\.ts|d\.ts\.map)$/;
if (existsSync(dist)) {
  for (const f of readdirSync(dist, { recursive: true, encoding: 'utf8' })) {
    if (!OUTPUT.test(f)) continue;
    if (!existsSync(join(src, f.replace(OUTPUT, '.ts')))) rmSync(join(dist, f));
  }
}
for (const f of assets) cpSync(join(src, f), join(dist, f));
