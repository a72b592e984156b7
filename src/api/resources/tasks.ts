import type { Paginator, PageQuery } from '../pagination.js';
import type { ApiPromise } from '../response.js';
import { Task } from '../../spec/schemas/index.js';
import type { RequestOptions, WriteOptions } from '../transport.js';
import { TIMESTAMP_FORM } from '../dates.js';
import { check } from '../validate.js';
import { idPath, iso, listing, one, paged, type ResourceContext } from './shared.js';

export interface TaskListQuery extends PageQuery {
  status?: string;
  assignee_id?: number;
  contact_id?: number;
  /** Tasks due at or before. */
  due_before?: string | Date;
}

/**
 * Body of `POST /tasks`. The spec names `title`, `due_at`, `contact_id`, `status`;
 * `description`, `type` and `assignee_id` mirror the record's fields. Without an
 * assignee the task goes to the token's own teammate.
 */
export interface TaskCreate {
  title: string;
  due_at: string | Date;
  description?: string | null;
  type?: string;
  status?: string;
  assignee_id?: number;
  contact_id?: number | null;
}
/** Body of `PATCH /tasks/{id}`: only the fields sent are touched; `status: 'done'` stamps `completed_at`. */
export type TaskPatch = Partial<TaskCreate>;

function checkTask(op: string, b: TaskPatch, create: boolean): Record<string, unknown> {
  const c = check(op);
  if (create || b.title !== undefined) c.required('title', b.title, 255);
  if (create || b.due_at !== undefined) c.present('due_at', b.due_at, TIMESTAMP_FORM);
  c.timestamp('due_at', b.due_at);
  const due = iso(b.due_at);
  c.int('assignee_id', b.assignee_id, 1).int('contact_id', b.contact_id, 1);
  return due === undefined ? { ...b } : { ...b, due_at: due };
}

export function tasksResource(ctx: ResourceContext) {
  const { transport: t } = ctx;
  return {
    /** `GET /tasks`, soonest first. */
    list(query: TaskListQuery = {}, options?: RequestOptions): Paginator<Task> {
      check('tasks.list').dateOrTimestamp('due_before', query.due_before);
      return listing(ctx, 'tasks.list', '/tasks', paged(Task), { ...query, due_before: iso(query.due_before) }, options);
    },
    /** `POST /tasks` (IK). */
    create(body: TaskCreate, options?: WriteOptions): ApiPromise<Task> {
      const payload = checkTask('tasks.create', body, true);
      return t.request({ op: 'tasks.create', method: 'POST', path: '/tasks', body: payload, schema: one(Task), repeat: 'ik', options });
    },
    /** `PATCH /tasks/{id}` (IK). */
    update(id: number, body: TaskPatch, options?: WriteOptions): ApiPromise<Task> {
      const payload = checkTask('tasks.update', body, false);
      return t.request({
        op: 'tasks.update',
        method: 'PATCH',
        path: `/tasks/${idPath('tasks.update', 'id', id)}`,
        body: payload,
        schema: one(Task),
        repeat: 'ik',
        options,
      });
    },
  };
}

export type TasksResource = ReturnType<typeof tasksResource>;
