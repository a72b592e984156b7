import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { commands } from '../../../src/cli/registry.js';

// The registry lists the commands without importing them (each loads when it runs): each entry must load the
// command of its name, and no command module may be left out of it.
describe('the command registry', () => {
  it.each(commands.map((c) => [c.name, c] as const))('%s loads the command of that name, with its help', async (name, entry) => {
    const command = await entry.load();
    expect(command.name).toBe(name);
    expect(command.help).toMatch(/^Usage: switchyard /);
    expect(entry.summary.length).toBeGreaterThan(10);
  });

  it('lists every command module of src/cli', () => {
    const dir = new URL('../../../src/cli/', import.meta.url);
    const defined = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) => [...readFileSync(new URL(f, dir), 'utf8').matchAll(/^export const \w+: Command = \{\n\s+name: '([\w-]+)'/gm)])
      .map((m) => m[1]);
    expect(defined.sort()).toEqual(commands.map((c) => c.name).sort());
  });
});
