import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  scripts: Record<string, string>;
  files: string[];
};

// The packed package.json is this one. npm (11) lists every package with a script it would run on
// install ("install scripts not yet covered by allowScripts"): the trial saw `switchyard@0.1.0 (prepare: npm run build)`.
// The package ships built; it needs nothing run when installed.
const INSTALL_TIME = ['preinstall', 'install', 'postinstall', 'prepare', 'preprepare', 'postprepare', 'dependencies'];

describe('package lifecycle scripts', () => {
  it('has no script npm runs when the package is installed', () => {
    expect(Object.keys(pkg.scripts).filter((s) => INSTALL_TIME.includes(s))).toEqual([]);
  });

  it('builds dist/ before it is packed (npm pack, npm publish, a git-URL install) and ships it', () => {
    expect(pkg.scripts['prepack']).toBe('npm run build');
    expect(pkg.files).toContain('dist');
  });
});
