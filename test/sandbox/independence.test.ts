import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The sandbox is a second, independent reading of the API spec: it may share no validation, transport or
// error code with the API client (src/api), or tests of the client against it would agree with its mistakes.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const sandboxDir = join(root, 'src/sandbox');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

describe('sandbox independence', () => {
  it('no sandbox module imports the API client (src/api)', () => {
    const offenders = files(sandboxDir).flatMap((file) => {
      const specifiers = [...readFileSync(file, 'utf8').matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)]
        .map((m) => m[1] ?? m[2]!).filter((s) => s.startsWith('.'));
      return specifiers.filter((s) => relative(join(root, 'src/api'), resolve(dirname(file), s)).split(/[\\/]/)[0] !== '..')
        .map((s) => `${relative(root, file)} -> ${s}`);
    });
    expect(offenders).toEqual([]);
  });
});
