// `npm run lint:tests` (part of `npm run lint`): the layout of test/ (test/README.md,
// "Finding the test of a file"). A test of src/<dir>/<module>.ts lives at
// test/<project>/<dir>/<module>[-<aspect>|.<kind>].test.ts, so its folder mirrors src/.
// Fails, naming each file, when:
// - a file under test/ is neither a test of a project nor under test/support/ (or test/README.md);
// - a test's folder (below test/<project>/) is not a folder of src/ nor one of AREAS below;
// - a test is named after a module of src/ that is in another folder (test/unit/sources/diff.test.ts
//   when diff.ts is in src/sources/poll/): the name says where to look, the folder must agree.
//   A name shared by modules of several folders (contacts: api/resources, sandbox/domain, …) is a
//   subject, not a module, and is not checked.
// Reports, without failing: how many src/ modules no test names, imports or mentions by path
// (`--untested` lists them).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(ROOT, 'src');
const TEST = join(ROOT, 'test');

/** The vitest projects of vitest.config.ts: test/<project>/. */
const PROJECTS = ['unit', 'integration', 'e2e', 'types', 'faults'];

/** Areas that are not one src/ folder: the only folders of test/<project>/ that src/ does not have. */
const AREAS = {
  package: 'the published package: package.json exports and entry points, the packed tarball, containers',
};

const posix = (p) => p.split(sep).join('/');
function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? walk(p) : [p];
  });
}

const srcFiles = walk(SRC).map((f) => posix(relative(SRC, f)));
const srcDirs = new Set(srcFiles.map((f) => posix(dirname(f))).flatMap((d) => d.split('/').map((_, i, a) => a.slice(0, i + 1).join('/'))));
srcDirs.delete('.');
const modules = srcFiles.filter((f) => f.endsWith('.ts'));
/** Module name -> the src/ folders that have a module of that name ('.' for src/ itself). */
const foldersOf = new Map();
for (const m of modules) {
  const name = basename(m, '.ts');
  foldersOf.set(name, [...(foldersOf.get(name) ?? []), posix(dirname(m))]);
}

const problems = [];
const tests = [];
for (const file of walk(TEST).map((f) => posix(relative(TEST, f)))) {
  const [top, ...rest] = file.split('/');
  if (file === 'README.md' || top === 'support') continue;
  const where = `test/${file}`;
  if (!PROJECTS.includes(top) || rest.length === 0) {
    problems.push(`${where}: not under test/<project>/ (projects: ${PROJECTS.join(', ')}) nor test/support/`);
    continue;
  }
  const suffix = top === 'types' ? '.test-d.ts' : '.test.ts';
  if (!file.endsWith(suffix)) {
    problems.push(`${where}: not a test (test/${top}/ holds *${suffix} only; helpers go in test/support/)`);
    continue;
  }
  const folder = rest.slice(0, -1).join('/');
  const name = rest.at(-1);
  tests.push(file);
  if (!folder) {
    problems.push(`${where}: no folder; put it in test/${top}/<the src/ folder it tests>/`);
    continue;
  }
  if (!srcDirs.has(folder) && !(folder in AREAS)) {
    problems.push(
      `${where}: src/${folder}/ does not exist and ${folder} is not one of the listed areas (${Object.keys(AREAS).join(', ')}); put it in the folder of the src/ code it tests`,
    );
    continue;
  }
  const stem = name.slice(0, name.indexOf('.'));
  const own =
    existsSync(join(SRC, folder, `${stem}.ts`)) || (existsSync(join(SRC, folder, stem)) && statSync(join(SRC, folder, stem)).isDirectory());
  const elsewhere = [...new Set(foldersOf.get(stem) ?? [])];
  if (!own && elsewhere.length === 1) {
    const there = elsewhere[0] === '.' ? `src/${stem}.ts` : `src/${elsewhere[0]}/${stem}.ts`;
    problems.push(
      `${where}: named after ${there}, so it belongs in test/${top}/${elsewhere[0] === '.' ? '<area>' : elsewhere[0]}/ (or name it after what it tests)`,
    );
  }
}

// Report: src/ modules that no test names (test/*/<dir>/<module>[-.]…), imports (a relative import
// resolving to it) or mentions by path (src/<dir>/<module>.ts or <dir>/<module>.js in its text).
const testTexts = tests.map((t) => [t, readFileSync(join(TEST, t), 'utf8')]);
const imported = new Set();
for (const [t, text] of testTexts) {
  for (const m of text.matchAll(/['"](\.\.?\/[^'"\n]+)['"]/g)) {
    const target = posix(relative(SRC, resolve(dirname(join(TEST, t)), m[1]))).replace(/\.js$/, '.ts');
    if (!target.startsWith('..')) imported.add(target);
  }
}
const allText = testTexts.map(([, text]) => text).join('\n');
const untested = modules.filter((m) => {
  if (m.endsWith('.d.ts') || imported.has(m)) return false;
  const dir = posix(dirname(m));
  const stem = basename(m, '.ts');
  const named = tests.some((t) => {
    const parts = t.split('/');
    const name = parts.at(-1);
    return parts.slice(1, -1).join('/') === dir && (name.startsWith(`${stem}.`) || name.startsWith(`${stem}-`));
  });
  return !named && !allText.includes(`src/${m}`) && !allText.includes(m.replace(/\.ts$/, '.js'));
});

for (const p of problems) console.error(p);
console.log(
  `test layout: ${tests.length} test files, ${problems.length} misplaced; ` +
    `${untested.length} of ${modules.length} src/ modules are not named, imported or mentioned by a test` +
    (process.argv.includes('--untested') ? ':' : ' (--untested lists them)'),
);
if (process.argv.includes('--untested')) for (const m of untested) console.log(`  src/${m}`);
process.exit(problems.length ? 1 : 0);
