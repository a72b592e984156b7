import { Hono } from 'hono';
import { z } from 'zod';
import { caller, type Deps, type SandboxEnv } from '../context.js';
import { contactIdIn, teammateIn } from '../domain/refs.js';
import { invalid } from '../errors.js';
import { guard } from '../middleware/guard.js';
import { paginate, perPage } from '../pagination.js';
import type { Task, Workspace } from '../types.js';
import { body, intParam, recordAt, strictBody, timeParam, Timestamp } from '../validation.js';
import { taskView } from '../views/work.js';

/** Task types accepted (spec shows `call`; the rest is our choice). */
export const TASK_TYPES = ['call', 'email', 'meeting', 'follow_up', 'todo'] as const;
/** Task statuses (spec shows `open` and `done`; no others: our choice). */
export const TASK_STATUSES = ['open', 'done'] as const;
const TaskFields = strictBody({
  title: z.string().trim().min(1, 'is required').max(255, 'may not be longer than 255 characters'),
  due_at: Timestamp,
  description: z.string().nullable().optional(),
  type: z.enum(TASK_TYPES).optional(),
  status: z.enum(TASK_STATUSES).optional(),
  assignee_id: z.number().int().nullable().optional(),
  contact_id: z.number().int().nullable().optional(),
});
const TaskPatch = TaskFields.partial();

function checkRefs(ws: Workspace, b: z.infer<typeof TaskPatch>): void {
  if (b.assignee_id != null) teammateIn(ws, b.assignee_id, 'assignee_id', { active: true });
  if (b.contact_id != null) contactIdIn(ws, b.contact_id, 'contact_id');
}

/** Tasks (spec: Tasks). Pages are soonest first: by `due_at` ascending, then id. */
export function taskRoutes(deps: Deps): Hono<SandboxEnv> {
  const app = new Hono<SandboxEnv>();
  const { state } = deps;
  const soonestFirst = (t: Task): number[] => [t.dueAt, t.id];

  app.get('/tasks', guard(deps, 'tasks:read'), (c) => {
    const auth = caller(c);
    const q = c.req.query();
    const ws = auth.workspace;
    if (q.status && !TASK_STATUSES.includes(q.status as Task['status']))
      throw invalid('status', `must be one of ${TASK_STATUSES.join(', ')}`);
    const assignee = intParam(q.assignee_id, 'assignee_id');
    if (assignee !== undefined) teammateIn(ws, assignee, 'assignee_id');
    const contact = intParam(q.contact_id, 'contact_id');
    if (contact !== undefined) contactIdIn(ws, contact, 'contact_id');
    const dueBefore = timeParam(q.due_before, 'due_before', true);
    const rows = [...auth.workspace.tasks.values()].filter(
      (t) =>
        (!q.status || t.status === q.status) &&
        (assignee === undefined || t.assigneeId === assignee) &&
        (contact === undefined || t.contactId === contact) &&
        (dueBefore === undefined || t.dueAt <= dueBefore),
    );
    return c.json(paginate(rows, soonestFirst, taskView, { perPage: perPage(q.per_page), cursor: q.cursor }));
  });

  // Spec: a task without an assignee is assigned to the token's own teammate; `done` stamps completed_at.
  app.post('/tasks', guard(deps, 'tasks:write'), async (c) => {
    const auth = caller(c);
    const ws = auth.workspace;
    const b = await body(c, TaskFields);
    checkRefs(ws, b);
    const now = state.now();
    const status = b.status ?? 'open';
    const task: Task = {
      id: state.ids.take(),
      title: b.title,
      description: b.description ?? null,
      type: b.type ?? 'todo',
      status,
      dueAt: Date.parse(b.due_at),
      completedAt: status === 'done' ? now : null,
      assigneeId: b.assignee_id ?? auth.teammate.id,
      createdBy: auth.teammate.id,
      contactId: b.contact_id ?? null,
    };
    ws.tasks.set(task.id, task);
    return c.json({ data: taskView(task) }, 201);
  });

  app.patch('/tasks/:id', guard(deps, 'tasks:write'), async (c) => {
    const auth = caller(c);
    const ws = auth.workspace;
    const task = recordAt(ws.tasks, c.req.param('id'), 'Task');
    const b = await body(c, TaskPatch);
    checkRefs(ws, b);
    if (b.title !== undefined) task.title = b.title;
    if (b.description !== undefined) task.description = b.description;
    if (b.type !== undefined) task.type = b.type;
    if (b.due_at !== undefined) task.dueAt = Date.parse(b.due_at);
    if (b.assignee_id !== undefined) task.assigneeId = b.assignee_id ?? auth.teammate.id;
    if (b.contact_id !== undefined) task.contactId = b.contact_id;
    if (b.status !== undefined && b.status !== task.status) {
      task.status = b.status;
      task.completedAt = b.status === 'done' ? state.now() : null;
    }
    return c.json({ data: taskView(task) });
  });
  return app;
}
