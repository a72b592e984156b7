import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { handlersCommand } from '../../../src/cli/handlers.js';
import { memoryIo } from '../../support/io.js';

const DIR = fileURLToPath(new URL('../../support/handlers/schedule-tools', import.meta.url));

/** `switchyard handlers` lists a schedule as it lists a handler: settings included, and a bad one named. */
describe('switchyard handlers: schedules', () => {
  it('lists each schedule with its settings (required, default, description), as for a handler', async () => {
    const io = memoryIo({ HANDLERS_DIR: DIR, DIGEST_LABEL: 'Digest' });
    expect(await handlersCommand.run([], io)).toBe(0);
    expect(io.out()).toMatch(
      /digest \(schedule\)\n {2}runs: {6}every 1h\n {2}next run: {2}\S+\n {2}abilities: tasks:read\n {2}settings: {2}DIGEST_DAYS \(default 1\): days ahead the digest looks\n {13}DIGEST_LABEL \(required\)\n {2}retry: /,
    );
    expect(io.out()).toMatch(/label-contact\n[\s\S]*\n {2}settings: {2}\(none\)\n/);
    const json = memoryIo({ HANDLERS_DIR: DIR, DIGEST_LABEL: 'Digest' });
    await handlersCommand.run(['--json'], json);
    const out = JSON.parse(json.out()) as { schedules: { id: string; settings: { name: string }[]; settingsProblems: string[] }[] };
    expect(out.schedules[0]).toMatchObject({
      id: 'digest',
      settings: [{ name: 'DIGEST_DAYS' }, { name: 'DIGEST_LABEL' }],
      settingsProblems: [],
    });
  });

  it('a schedule setting missing or invalid here is shown under invalid:, fails the command and is named', async () => {
    const io = memoryIo({ HANDLERS_DIR: DIR, DIGEST_DAYS: 'soon' });
    expect(await handlersCommand.run([], io)).toBe(1);
    expect(io.out()).toMatch(/ {2}invalid: {3}DIGEST_DAYS is invalid: expected number\n {13}DIGEST_LABEL is not set: expected string\n/);
    expect(io.err()).toBe(
      'switchyard handlers: settings missing or invalid in this environment; the worker would not start: digest (schedule)\n',
    );
  });
});
