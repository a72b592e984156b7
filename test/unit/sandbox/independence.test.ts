import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The sandbox is a second, independent reading of the API spec: it shares the spec's vocabulary (src/spec:
// names, enums, limits) and general helpers (src/util), but no validation, transport or error code with the
// API client (src/api) or the rest of the service, or tests of the client against it would agree with its
// mistakes. The resource schemas in src/spec/schemas are the client's reading of the answers' shapes, so they
// are off limits too.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const sandboxDir = join(root, 'src/sandbox');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Relative imports of `file` that leave src/sandbox, as paths from the repository root. */
function outsideImports(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)]
    .map((m) => m[1] ?? m[2]!)
    .filter((s) => s.startsWith('.'))
    .map((s) =>
      relative(root, resolve(dirname(file), s))
        .split(/[\\/]/)
        .join('/'),
    )
    .filter((target) => !target.startsWith('src/sandbox/'));
}

const allowed = (target: string): boolean =>
  (target.startsWith('src/spec/') && !target.startsWith('src/spec/schemas/')) || target.startsWith('src/util/');

describe('sandbox independence', () => {
  it('sandbox modules import only src/spec vocabulary and src/util helpers from outside src/sandbox', () => {
    const offenders = files(sandboxDir).flatMap((file) =>
      outsideImports(file)
        .filter((t) => !allowed(t))
        .map((t) => `${relative(root, file)} -> ${t}`),
    );
    expect(offenders).toEqual([]);
  });

  it('the rule tells vocabulary from the client and the rest of the service', () => {
    expect(['src/spec/abilities.js', 'src/spec/search-rules.js', 'src/util/sleep.js'].filter(allowed)).toHaveLength(3);
    expect(
      ['src/api/client.js', 'src/spec/schemas/contact.js', 'src/events/catalogue.js', 'src/signature.js', 'src/worker/runner.js'].filter(
        allowed,
      ),
    ).toEqual([]);
  });
});
