#!/usr/bin/env node
// The published CLI runs the compiled output; `npm run build` produces it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  process.stderr.write('switchyard: not built yet. Run `npm run build` (or `npm ci`, which builds) first.\n');
  process.exit(2);
}
await import(main.href);
