import type { IdSequence } from '../ids.js';
import type { Pipeline, Workspace } from '../types.js';

/** An empty workspace with the settings every workspace starts with (payment methods: spec, Order). */
export function emptyWorkspace(ids: IdSequence, name: string, key: string): Workspace {
  const id = ids.take();
  return {
    id,
    key,
    name,
    company: { id: ids.take(), name: `${name} Ltd` },
    account: { id: ids.take(), name },
    teammates: [],
    teams: [],
    aiAgents: [],
    channels: [],
    stages: [],
    labels: [],
    pipelines: [],
    closingNotes: [],
    templates: [],
    paymentMethods: [
      { key: 'cod', active: true },
      { key: 'bank_transfer', active: true },
      { key: 'wallet', active: true },
    ],
    segments: [],
    products: new Map(),
    contacts: new Map(),
    conversations: new Map(),
    messages: new Map(),
    deals: new Map(),
    orders: new Map(),
    tasks: new Map(),
    leads: new Map(),
    nextOrderNumber: 1001,
  };
}

/** A pipeline with the given open stages followed by its Won and Lost stages. */
export function pipeline(ids: IdSequence, name: string, open: string[]): Pipeline {
  return {
    id: ids.take(),
    name,
    stages: [
      ...open.map((n) => ({ id: ids.take(), name: n, kind: 'open' as const })),
      { id: ids.take(), name: 'Won', kind: 'won' },
      { id: ids.take(), name: 'Lost', kind: 'lost' },
    ],
  };
}

/**
 * Lifecycle stages, labels, pipelines and closing notes shared by both seeded
 * workspaces: a `default`-role stage and a stage with outcome `won` (the two
 * values the spec shows), labels `customer` and `vip`.
 */
export function standardSettings(ws: Workspace, ids: IdSequence): void {
  ws.stages.push(
    { id: ids.take(), name: 'New Lead', role: 'default', outcome: null },
    { id: ids.take(), name: 'Qualified', role: null, outcome: null },
    { id: ids.take(), name: 'Customer', role: null, outcome: 'won' },
    { id: ids.take(), name: 'Churned', role: null, outcome: 'lost' },
  );
  ws.labels.push({ id: ids.take(), name: 'customer' }, { id: ids.take(), name: 'vip' }, { id: ids.take(), name: 'newsletter' });
  ws.pipelines.push(pipeline(ids, 'Sales', ['New', 'Negotiation']), pipeline(ids, 'Renewals', ['Due']));
  ws.closingNotes.push(
    { category: 'Resolved', description: 'The customer got what they needed' },
    { category: 'Spam', description: 'Unwanted message' },
    { category: 'No reply', description: 'The customer stopped answering' },
  );
}

/**
 * Team queues and AI agents: what `team_id` and an `ai` assignee name. Seeded
 * after every other record (ids come from one sequence), so the ids of the
 * records seeded before them did not move when they were added.
 */
export function routingSettings(ws: Workspace, ids: IdSequence, teams: string[], aiAgent: string): void {
  ws.teams.push(...teams.map((name) => ({ id: ids.take(), name })));
  ws.aiAgents.push({ id: ids.take(), name: aiAgent });
}
