import type { SandboxState } from '../state.js';
import { productView } from '../views/commerce.js';

/**
 * Settings and record ids of every workspace. The API has no way to discover
 * workspace identifiers (spec: capability table), so tests and scripts read
 * channel, stage, label, pipeline and teammate ids here.
 */
export function listWorkspaces(state: SandboxState): unknown[] {
  return [...state.workspaces.values()].map((ws) => ({
    id: ws.id,
    key: ws.key,
    name: ws.name,
    burst: state.burstOf(ws.id),
    teammates: ws.teammates.map((t) => ({ id: t.id, name: t.name, email: t.email, active: t.active, view_phone: t.viewPhone })),
    teams: ws.teams.map((t) => ({ ...t })),
    ai_agents: ws.aiAgents.map((a) => ({ ...a })),
    channels: ws.channels.map((ch) => ({ id: ch.id, name: ch.name, type: ch.type, public: ch.public })),
    lifecycle_stages: ws.stages.map((s) => ({ ...s })),
    labels: ws.labels.map((l) => ({ ...l })),
    pipelines: ws.pipelines.map((p) => ({ id: p.id, name: p.name, stages: p.stages.map((s) => ({ ...s })) })),
    closing_notes: ws.closingNotes.map((n) => ({ ...n })),
    templates: ws.templates.map((t) => ({ name: t.name, channel_id: t.channelId, language: t.language, placeholders: t.placeholders })),
    payment_methods: ws.paymentMethods.map((m) => m.key),
    segments: ws.segments.map((s) => ({ id: s.id, name: s.name })),
    products: [...ws.products.values()].map(productView),
    contact_ids: [...ws.contacts.keys()],
    conversation_ids: [...ws.conversations.keys()],
    message_ids: [...ws.messages.keys()],
    deal_ids: [...ws.deals.keys()],
    order_ids: [...ws.orders.keys()],
    task_ids: [...ws.tasks.keys()],
    lead_ids: [...ws.leads.keys()],
  }));
}
