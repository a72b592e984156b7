import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeFrame, describeLoadFailure } from '../../../src/handler/load-error.js';

// What a person reads when a handler module does not load: file:line:column, the
// message, a code frame for syntax errors and a hint when the module system is the
// problem; never a stack. CommonJS modules are really loaded (require); an ES
// module's errors, which reach Node's loader only outside vitest, are built as Node
// and tsx raise them (the built CLI's own: test/e2e/handler/loader).
let dir: string;
const requireHere = createRequire(import.meta.url);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sy-load-error-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `name` and returns the error loading it with require() raises. */
function failing(name: string, source: string): { file: string; err: unknown } {
  const file = join(dir, name);
  writeFileSync(file, source);
  try {
    requireHere(file);
  } catch (err) {
    return { file, err };
  }
  throw new Error(`${name} loaded`);
}

describe('describeLoadFailure', () => {
  it('a syntax error: where, what, and the line with a caret under the column', () => {
    const { file, err } = failing('bad.cjs', "module.exports = {\n  id: 'x',,\n};\n");
    expect(describeLoadFailure(file, 'handlers/bad.cjs', err)).toBe(
      "handlers/bad.cjs:2:11: syntax error: Unexpected token ','\n  1 | module.exports = {\n> 2 |   id: 'x',,\n    |           ^\n  3 | };",
    );
  });

  it('an error thrown while the module loads: the line of the throw and the message, no stack', () => {
    const { file, err } = failing('throws.cjs', "const a = 1;\nthrow new Error('boom at load ' + a);\n");
    expect(describeLoadFailure(file, 'throws.cjs', err)).toMatch(/^throws\.cjs:2:\d+: boom at load 1$/);
  });

  it('ES module syntax in a .cjs file: rename it to .mjs, or use require()', () => {
    const { file, err } = failing('esm.cjs', 'export default {};\n');
    expect(describeLoadFailure(file, 'esm.cjs', err)).toMatch(
      /^esm\.cjs:1:\d+: syntax error: Unexpected token 'export'\n\(esm\.cjs is CommonJS by its extension: rename it to \.mjs to make it an ES module, or use require\(\) and module\.exports\)/,
    );
  });

  it('ES module syntax in a .js file under a package.json without "type": "module": rename it, or set the type', () => {
    // As Node raises it without module-syntax detection (this Node detects it and loads the file as an ES module).
    writeFileSync(join(dir, 'package.json'), '{}');
    const file = join(dir, 'plain.js');
    writeFileSync(file, "import { z } from 'zod';\n");
    const err = new SyntaxError('Cannot use import statement outside a module');
    err.stack = `${file}:1\nimport { z } from 'zod';\n^^^^^^\n\nSyntaxError: Cannot use import statement outside a module\n    at wrapSafe (node:internal/modules/cjs/loader:1:1)`;
    expect(describeLoadFailure(file, 'plain.js', err)).toBe(
      'plain.js:1:1: syntax error: Cannot use import statement outside a module\n' +
        '(plain.js is loaded as CommonJS because the nearest package.json has no "type": "module": rename it to .mjs, or set "type": "module" in that package.json)\n' +
        "> 1 | import { z } from 'zod';\n    | ^\n  2 | ",
    );
  });

  it('require or module.exports in an ES module: use import and export default, or rename it to .cjs', () => {
    const file = join(dir, 'cjs-style.mjs');
    writeFileSync(file, 'module.exports = {};\n');
    const err = new ReferenceError('module is not defined in ES module scope');
    err.stack = `ReferenceError: module is not defined in ES module scope\n    at file://${file}:1:1\n    at ModuleJob.run (node:internal/modules/esm/module_job:1:1)`;
    expect(describeLoadFailure(file, 'cjs-style.mjs', err)).toBe(
      'cjs-style.mjs:1:1: module is not defined in ES module scope\n(cjs-style.mjs is loaded as an ES module: use import and export default, or rename it to .cjs to make it CommonJS)',
    );
  });

  it("an ES module's syntax error without a location (as Node raises it): found by parsing the file again", () => {
    const file = join(dir, 'broken.ts');
    writeFileSync(file, "export default {\n  id: 'é',\n  on: [,,\n");
    const text = describeLoadFailure(file, 'broken.ts', new SyntaxError('Unexpected end of input'));
    expect(text).toMatch(/^broken\.ts:\d+:\d+: syntax error: /);
    expect(text).toContain('|');
  });

  it("tsx's message (file:line:column: ERROR) gives the location, in characters not bytes", () => {
    const file = join(dir, 'typed.ts');
    writeFileSync(file, "const s = 'é';\nconst x: = 1;\n");
    const err = new Error(`Transform failed with 1 error:\n${file}:2:9: ERROR: Unexpected "="`);
    err.name = 'TransformError';
    expect(describeLoadFailure(file, 'typed.ts', err)).toBe(
      `typed.ts:2:10: syntax error: Unexpected "="\n  1 | const s = 'é';\n> 2 | const x: = 1;\n    |          ^\n  3 | `,
    );
  });

  it('a syntax error in a helper the handler imports names the helper, then the handler', () => {
    const helper = join(dir, 'helper.ts');
    writeFileSync(helper, 'export const a = ;\n');
    const handler = join(dir, 'uses-helper.ts');
    writeFileSync(handler, "import { a } from './helper.js';\nexport default a;\n");
    const err = new Error(`Transform failed with 1 error:\n${helper}:1:17: ERROR: Unexpected ";"`);
    const text = describeLoadFailure(handler, 'uses-helper.ts', err);
    expect(text).toMatch(/helper\.ts:1:18: syntax error: Unexpected ";"/);
    expect(text.endsWith('\n(imported by uses-helper.ts)')).toBe(true);
  });

  it('a file that cannot be read, and a thrown non-error, still say which file', () => {
    expect(describeLoadFailure(join(dir, 'gone.ts'), 'gone.ts', 'not an Error')).toBe('gone.ts: not an Error');
  });
});

describe('codeFrame', () => {
  it('the line before and after, numbers padded to the widest, tabs as spaces', () => {
    const source = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n');
    expect(codeFrame(source, { line: 10, column: 3 })).toBe('   9 | line 9\n> 10 | line 10\n     |   ^');
    expect(codeFrame('\tfirst\nsecond', { line: 1, column: 2 })).toBe('> 1 |  first\n    |  ^\n  2 | second');
  });
});
