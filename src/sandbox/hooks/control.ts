import { Hono } from 'hono';
import { z } from 'zod';
import type { Deps } from '../context.js';
import { invalid, notFound } from '../errors.js';
import { SeedExtras } from '../seed/index.js';
import { describeToken } from '../tokens.js';
import { parseDuration } from '../../util/index.js';
import { body, check, readJson, Timestamp } from '../validation.js';
import { chosenWorkspace, WorkspaceRef } from './choose.js';
import { listWorkspaces } from './workspaces.js';

const Fault = z.object({
  path: z.string().default('*'),
  method: z.string().toUpperCase().nullable().default(null),
  error_rate: z.number().min(0).max(1).default(0),
  latency_ms: z.number().int().min(0).max(60_000).default(0),
  force_429: z.boolean().default(false),
  token_expired: z.boolean().default(false),
  plan_limit: z.boolean().default(false),
  count: z.number().int().min(1).nullable().default(null),
});
const Clock = z.object({
  advance_ms: z.number().optional(),
  advance: z.string().optional(),
  set: Timestamp.optional(),
});
const Quota = z.object({
  limit: z.number().int().min(0).nullable(),
  used: z.number().int().min(0).default(0),
  workspace_id: z.number().int().optional(),
  workspace: WorkspaceRef.optional(),
});
const Burst = z.object({ burst: z.number().int().min(1), workspace: WorkspaceRef.optional() });

/** Hooks that steer the sandbox: request log, faults, reset, clock, switches, quota, tokens. */
export function controlHooks(deps: Deps): Hono {
  const app = new Hono();
  const { state } = deps;

  app.get('/requests', (c) => {
    const q = c.req.query();
    return c.json({
      data: state.log.list({
        ...(q.method ? { method: q.method } : {}),
        ...(q.path ? { path: q.path } : {}),
        ...(q.status ? { status: Number(q.status) } : {}),
        ...(q.token ? { token: q.token } : {}),
        ...(q.idempotency_key ? { idempotency_key: q.idempotency_key } : {}),
      }),
    });
  });
  app.delete('/requests', (c) => {
    state.log.clear();
    return c.body(null, 204);
  });

  app.get('/faults', (c) => c.json({ data: state.faults.list() }));
  app.post('/faults', async (c) => {
    const f = await body(c, Fault);
    const { count, ...rule } = f;
    return c.json({ data: state.faults.add({ ...rule, path: rule.path.replace(/^\/api\/v1/, ''), remaining: count }) }, 201);
  });
  app.delete('/faults', (c) => {
    state.faults.clear();
    return c.body(null, 204);
  });
  app.delete('/faults/:id', (c) => {
    if (!state.faults.remove(Number(c.req.param('id')))) throw notFound('Fault');
    return c.body(null, 204);
  });

  app.post('/reset', async (c) => {
    const raw = (await readJson(c)) as { seed?: unknown };
    state.reset(raw.seed === undefined ? undefined : check(SeedExtras, raw.seed));
    deps.emitter.clear();
    return c.json({ data: { tokens: state.tokens.map(describeToken) } });
  });

  app.get('/clock', (c) => c.json({ data: { now: new Date(state.now()).toISOString() } }));
  app.post('/clock', async (c) => {
    const b = await body(c, Clock);
    if (b.set !== undefined) {
      state.clock.set(Date.parse(b.set));
    }
    if (b.advance !== undefined) {
      const ms = parseDuration(b.advance);
      if (ms === null) throw invalid('advance', 'must be a duration such as 90s, 25h or 2d');
      state.clock.advance(ms);
    }
    if (b.advance_ms !== undefined) state.clock.advance(b.advance_ms);
    return c.json({ data: { now: new Date(state.now()).toISOString() } });
  });

  app.post('/legacy-retirement', async (c) => {
    state.settings.legacyRetired = (await body(c, z.object({ retired: z.boolean() }))).retired;
    return c.json({ data: { retired: state.settings.legacyRetired } });
  });
  app.post('/tls', async (c) => {
    state.settings.requireTls = (await body(c, z.object({ require: z.boolean() }))).require;
    return c.json({ data: { require: state.settings.requireTls } });
  });
  app.route('/', limitHooks(deps));
  app.get('/tokens', (c) => c.json({ data: state.tokens.map(describeToken) }));
  app.get('/workspaces', (c) => c.json({ data: listWorkspaces(state) }));
  return app;
}

/** The burst (per token, sized by each workspace's plan) and the monthly allowance (per workspace). */
function limitHooks({ state }: Deps): Hono {
  const app = new Hono();
  // Without a workspace: every workspace's burst (plan); with one: that workspace's only. Windows start over.
  app.post('/burst', async (c) => {
    const b = await body(c, Burst);
    if (b.workspace === undefined) {
      state.burst.burst = b.burst;
      state.workspaceBursts.clear();
    } else state.workspaceBursts.set(chosenWorkspace(state, b.workspace).id, b.burst);
    state.burst.clear();
    return c.json({ data: { burst: b.burst, ...(b.workspace === undefined ? {} : { workspace: b.workspace }) } });
  });
  app.post('/quota', async (c) => {
    const b = await body(c, Quota);
    const named = b.workspace_id ?? b.workspace;
    const ids =
      named !== undefined
        ? [chosenWorkspace(state, named, b.workspace_id !== undefined ? 'workspace_id' : 'workspace').id]
        : [...state.workspaces.keys()];
    for (const id of ids) state.quota.set(id, b.limit, b.used, state.now());
    return c.json({ data: { limit: b.limit, used: b.used, workspaces: ids } });
  });
  return app;
}
