// Copies the files the code reads at run time besides its modules (the Lua
// scripts, `src/**/*.lua`) into dist/ at the same paths, and removes copies
// whose source is gone (a stale script in dist/ would be refused as
// unregistered). Part of `npm run build`; plain Node, no shell tools.
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
for (const f of assets) cpSync(join(src, f), join(dist, f));
