import { invalid } from '../errors.js';
import type { AiAgent, Channel, Contact, Conversation, Pipeline, Team, Teammate, Workspace } from '../types.js';

/*
 * Spec, Errors: a value that names something that does not exist answers 422
 * ("the service declines to guess"). Each lookup here finds a record of the
 * caller's workspace by id or answers 422 naming the field; another
 * workspace's record does not exist for the caller. Query filters use them
 * too, so `?contact_id=999999` is a 422 rather than an empty page.
 */

function found<T>(value: T | undefined, field: string, message: string): T {
  if (value === undefined) throw invalid(field, message);
  return value;
}

export const contactIdIn = (ws: Workspace, id: number, field: string): Contact =>
  found(ws.contacts.get(id), field, `no contact ${id} in this workspace`);

export const conversationIdIn = (ws: Workspace, id: number, field: string): Conversation =>
  found(ws.conversations.get(id), field, `no conversation ${id} in this workspace`);

export const channelIn = (ws: Workspace, id: number, field: string): Channel =>
  found(
    ws.channels.find((c) => c.id === id),
    field,
    `no channel ${id} in this workspace`,
  );

export const pipelineIn = (ws: Workspace, id: number, field: string): Pipeline =>
  found(
    ws.pipelines.find((p) => p.id === id),
    field,
    `no pipeline ${id} in this workspace`,
  );

export const teamIn = (ws: Workspace, id: number, field: string): Team =>
  found(
    ws.teams.find((t) => t.id === id),
    field,
    `no team ${id} in this workspace`,
  );

export const aiAgentIn = (ws: Workspace, id: number, field: string): AiAgent =>
  found(
    ws.aiAgents.find((a) => a.id === id),
    field,
    `no AI agent ${id} in this workspace`,
  );

/** A teammate of the workspace; with `active`, one whose access is not revoked (assignees, mentions). */
export function teammateIn(ws: Workspace, id: number, field: string, opts: { active?: boolean } = {}): Teammate {
  const teammate = found(
    ws.teammates.find((t) => t.id === id),
    field,
    `no teammate ${id} in this workspace`,
  );
  if (opts.active && !teammate.active) throw invalid(field, `teammate ${id} is not active`);
  return teammate;
}
