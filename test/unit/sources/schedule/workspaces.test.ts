/** checkSchedulesFor: the workspaces a Config's deployment serves, `default` alone in a deployment of one. */
import { describe, expect, it } from 'vitest';
import { defineSchedule, HandlerDefinitionError } from '../../../../src/index.js';
import { checkSchedulesFor } from '../../../../src/sources/schedule/workspaces.js';

const handle = () => undefined;
const acmeOnly = defineSchedule({ id: 'acme-only', every: '1h', workspaces: ['acme'], handle });
const spec = (id: string) => ({ id, apiUrl: 'https://x.example/api/v1', token: 't', secrets: ['s'], burst: 30, weight: 1 });

describe('checkSchedulesFor', () => {
  it('a deployment of one serves only `default`: a schedule naming acme stops start-up, naming the schedule', () => {
    const one = { workspaces: undefined, workspacesFile: undefined };
    expect(() => checkSchedulesFor(one, [acmeOnly])).toThrow(HandlerDefinitionError);
    expect(() => checkSchedulesFor(one, [acmeOnly])).toThrow(
      'schedule "acme-only": "workspaces" names "acme", which is not a workspace of this deployment; its workspaces (a deployment of one, no WORKSPACES_FILE): default',
    );
    expect(() => checkSchedulesFor(one, [defineSchedule({ id: 'd', every: '1h', workspaces: ['default'], handle })])).not.toThrow();
  });

  it('a deployment of many serves the ids of its file', () => {
    const many = { workspaces: [spec('acme'), spec('beta')], workspacesFile: '/etc/sy/workspaces.json' };
    expect(() => checkSchedulesFor(many, [acmeOnly])).not.toThrow();
    const other = defineSchedule({ id: 'other', every: '1h', workspaces: ['acne'], handle });
    expect(() => checkSchedulesFor(many, [other])).toThrow(
      'schedule "other": "workspaces" names "acne", which is not a workspace of this deployment (did you mean "acme"?); its workspaces (WORKSPACES_FILE /etc/sy/workspaces.json): acme, beta',
    );
  });
});
