#!/usr/bin/env node
// Runs the compiled CLI (dist/, built by `npm run build`, and by npm itself
// through the `prepare` script on `npm install` in a clone, `npm pack`,
// `npm publish` and git dependencies); in a source checkout that has not been
// built yet, runs the TypeScript sources through tsx instead.
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
  const home = fileURLToPath(new URL('..', import.meta.url));
  process.stderr.write(
    `switchyard: this copy of the switchyard package (${home}) was installed without its compiled code (dist/ is missing).\n` +
      'It was packed without being built. Reinstall switchyard from a published release or a tarball made by `npm pack`\n' +
      '(npm builds it while packing): in a clone of Switchyard run `npm pack`, then in your project\n' +
      '`npm install <path to>/switchyard-<version>.tgz`, and run the command again.\n',
  );
  process.exit(2);
}
