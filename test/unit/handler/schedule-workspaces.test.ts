/** defineSchedule's `workspaces`: the ids it runs in, checked at load; runsIn says where a schedule runs. */
import { describe, expect, it } from 'vitest';
import { HandlerDefinitionError } from '../../../src/handler/define.js';
import { checkScheduleWorkspaces, defineSchedule, runsIn } from '../../../src/handler/schedule.js';

const loose = defineSchedule as (def: unknown) => ReturnType<typeof defineSchedule>;
const handle = () => undefined;
const refused = (workspaces: unknown): string => {
  try {
    loose({ id: 'digest', every: '1h', workspaces, handle });
  } catch (e) {
    expect(e).toBeInstanceOf(HandlerDefinitionError);
    return (e as Error).message;
  }
  throw new Error('expected defineSchedule to throw');
};

describe('defineSchedule workspaces', () => {
  it('without it, runs in every workspace; with it, in those it names (kept frozen)', () => {
    const all = defineSchedule({ id: 'all', every: '1h', handle });
    expect(all.workspaces).toBeNull();
    expect(runsIn(all, 'acme') && runsIn(all, 'default')).toBe(true);
    const some = defineSchedule({ id: 'some', every: '1h', workspaces: ['acme', 'beta-2'], handle });
    expect(some.workspaces).toEqual(['acme', 'beta-2']);
    expect(Object.isFrozen(some.workspaces)).toBe(true);
    expect([runsIn(some, 'acme'), runsIn(some, 'beta-2'), runsIn(some, 'gamma'), runsIn(some, 'default')]).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });

  it('refuses a value that is not a non-empty array of workspace ids, each named once', () => {
    const expected =
      "a non-empty array of workspace ids (as in WORKSPACES_FILE, e.g. ['acme', 'beta']); leave it out to run in every workspace";
    expect(refused('acme')).toBe(`schedule "digest": "workspaces" must be ${expected}, got "acme"`);
    expect(refused([])).toBe(`schedule "digest": "workspaces" must be ${expected}, got []`);
    expect(refused(['acme', 3])).toBe(
      `schedule "digest": "workspaces"[1] must be a workspace id (lower-case letters, digits and dashes, e.g. 'acme'), got 3`,
    );
    expect(refused(['Acme'])).toMatch(/"workspaces"\[0\] must be a workspace id .*got "Acme"$/);
    expect(refused(['acme', 'acme'])).toBe('schedule "digest": "workspaces" names "acme" twice; name each workspace once');
  });

  it('a misspelt option name is answered with workspaces', () => {
    expect(() => loose({ id: 'd', every: '1h', workspace: ['acme'], handle })).toThrow(
      'unknown option "workspace"; did you mean "workspaces"?',
    );
  });
});

describe('checkScheduleWorkspaces', () => {
  const s = (id: string, workspaces: string[] | null) => ({ id, workspaces });
  it('passes schedules naming served workspaces or none', () => {
    expect(() => checkScheduleWorkspaces([s('a', null), s('b', ['acme'])], ['acme', 'beta'], 'WORKSPACES_FILE w.json')).not.toThrow();
  });

  it('names each schedule and id the deployment does not serve, with the nearest workspace', () => {
    let err: unknown;
    try {
      checkScheduleWorkspaces([s('a', ['acme', 'betta']), s('b', ['zzz-unrelated'])], ['acme', 'beta'], 'WORKSPACES_FILE w.json');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HandlerDefinitionError);
    expect((err as Error).message.split('\n')).toEqual([
      'schedule "a": "workspaces" names "betta", which is not a workspace of this deployment (did you mean "beta"?); its workspaces (WORKSPACES_FILE w.json): acme, beta',
      'schedule "b": "workspaces" names "zzz-unrelated", which is not a workspace of this deployment; its workspaces (WORKSPACES_FILE w.json): acme, beta',
    ]);
    expect((err as HandlerDefinitionError).handlerId).toBeNull();
  });
});
