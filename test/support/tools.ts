import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Programs some tests drive, the Debian package that has each, and the variable that skips those tests. */
const TOOLS = {
  chromium: { found: () => existsSync('/usr/bin/chromium'), pkg: 'chromium', skip: 'SKIP_BROWSER' },
  'docker-compose': { found: () => onPath('docker-compose'), pkg: 'docker-compose', skip: 'SKIP_COMPOSE' },
  openssl: { found: () => onPath('openssl'), pkg: 'openssl', skip: 'SKIP_OPENSSL' },
} as const;

export type Tool = keyof typeof TOOLS;

function onPath(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
}

/**
 * Whether the tests that need `tool` are skipped: only when asked
 * (`SKIP_BROWSER=1`, …), which `npm test`'s closing line counts and names.
 * A missing tool is never a silent skip: `npm test` installs them
 * (scripts/setup.sh), and {@link requireTool} fails the test saying how.
 */
export function skipTool(tool: Tool): boolean {
  return process.env[TOOLS[tool].skip] === '1';
}

/** Throws, saying how to install it or skip its tests, when `tool` is missing (call in beforeAll). */
export function requireTool(tool: Tool): void {
  const t = TOOLS[tool];
  if (t.found()) return;
  throw new Error(
    `${tool} is not installed: \`npm test\` installs it (scripts/setup.sh test: apt-get install ${t.pkg}); ` +
      `install it, or run with ${t.skip}=1 to skip the tests that need it (they are counted as skipped in the closing line)`,
  );
}
