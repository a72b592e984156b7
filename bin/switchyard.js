#!/usr/bin/env node
// Runs the compiled CLI (dist/, made by `npm run build`); in a source checkout
// that has not been built yet, runs the TypeScript sources through tsx instead.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dist = new URL('../dist/cli/main.js', import.meta.url);
const src = new URL('../src/cli/main.ts', import.meta.url);
if (existsSync(fileURLToPath(dist))) {
  await import(dist.href);
} else if (existsSync(fileURLToPath(src))) {
  const { register } = await import('tsx/esm/api');
  register({ tsconfig: false });
  await import(src.href);
} else {
  process.stderr.write('switchyard: the CLI is not built; run `npm run build`\n');
  process.exit(2);
}
