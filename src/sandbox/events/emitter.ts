import { DEFAULT_WEBHOOK_RETRY, type RetryPolicy } from './backoff.js';
import { type WebhookEventName as EventName, SIGNATURE_HEADER } from '../../spec/index.js';
import { envelope, type Envelope } from './envelope.js';
import { DeliveryLane, type LaneOptions, type Pending } from './lane.js';
import { newRecord, resetRecord, type DeliveryRecord } from './record.js';

/** Header carrying the signature (spec: Events 3; the spec's neutral name for the branded header). */
export { SIGNATURE_HEADER };
export type { DeliveryRecord };

/** Where one workspace's events go: its webhook URL and signing secret. */
export interface WebhookTarget {
  workspaceId: number;
  url?: string | undefined;
  secret?: string | undefined;
}

/** Where and how events are delivered. */
export interface EmitterOptions {
  /** The workspace `configure`, `target` and `redeliver` act on when none is named: the first one. */
  primaryWorkspace: number;
  /** Each workspace's URL and secret (a workspace not listed has none: its events are recorded, not sent). */
  targets?: readonly WebhookTarget[];
  /** Injected transport (tests pass their own); global fetch by default. */
  fetch?: typeof fetch;
  retry?: Partial<RetryPolicy>;
  clock?: () => number;
  /** Called after anything that `saved()` reports changed (an event, an attempt, a re-point): `--keep-sandbox` saves then. */
  onChange?: () => void;
}

/** What `--keep-sandbox` keeps of the emitter: the event log, every delivery's status, and what is queued (its exact bytes). */
export interface SavedEvents {
  log: Envelope[];
  deliveries: DeliveryRecord[];
  queue: { id: string; bytes: string }[];
}

/**
 * Posts signed events, each to the webhook URL of the workspace it happened
 * in, signed with that workspace's secret. Delivery never blocks the API
 * answer: `emit` queues and returns. Each workspace has its own
 * {@link DeliveryLane} (in order, retried with the same id and bytes), so a
 * workspace's events never reach another's URL and one workspace's dead URL
 * never delays another's events.
 */
export class WebhookEmitter {
  private readonly lanes = new Map<number, DeliveryLane>();
  private readonly log: Envelope[] = [];
  private readonly records: DeliveryRecord[] = [];
  private readonly laneOptions: LaneOptions;
  private readonly primary: number;
  private readonly clock: () => number;
  private readonly onChange: () => void;
  private closed = false;

  constructor(options: EmitterOptions) {
    this.primary = options.primaryWorkspace;
    this.onChange = options.onChange ?? (() => undefined);
    this.clock = options.clock ?? Date.now;
    this.laneOptions = {
      fetch: options.fetch ?? fetch,
      retry: { ...DEFAULT_WEBHOOK_RETRY, ...options.retry },
      clock: this.clock,
      onChange: () => this.onChange(),
    };
    for (const t of options.targets ?? []) {
      if (this.lanes.has(t.workspaceId)) throw new Error(`workspace ${t.workspaceId} has two webhook targets`);
      this.lanes.set(t.workspaceId, new DeliveryLane(t.url ?? null, t.secret ?? null, this.laneOptions));
    }
  }

  /** The lane of a workspace (one with no URL until configured). */
  private lane(workspaceId: number): DeliveryLane {
    let lane = this.lanes.get(workspaceId);
    if (!lane) {
      lane = new DeliveryLane(null, null, this.laneOptions);
      if (this.closed) void lane.close();
      this.lanes.set(workspaceId, lane);
    }
    return lane;
  }

  /**
   * Points a workspace's deliveries (the first workspace's by default)
   * somewhere else; its queued events follow. With null, nothing of it is
   * attempted any more: every queued delivery becomes `not_sent`, keeping
   * its attempts so far, and can be sent again with `redeliver` once a URL
   * is set. An attempt already out finishes; only its answer is recorded.
   */
  configure(url: string | null, secret: string | null, workspaceId: number = this.primary): void {
    this.lane(workspaceId).configure(url, secret);
    this.onChange();
  }

  /** A workspace's current target (the first workspace's by default; the secret is not included). */
  target(workspaceId: number = this.primary): { url: string | null } {
    return { url: this.lanes.get(workspaceId)?.target() ?? null };
  }

  /** Records an event of a workspace and queues its delivery to that workspace's URL; returns the envelope sent. */
  emit(event: EventName, data: unknown, workspaceId: number): Envelope {
    const env = envelope(event, data, this.clock());
    this.log.push(env);
    const record = newRecord(env.id, event, workspaceId);
    this.records.push(record);
    const lane = this.lane(workspaceId);
    const url = lane.target();
    Object.assign(record, { url, state: url ? 'pending' : 'not_sent' });
    lane.push({ envelope: env, bytes: Buffer.from(JSON.stringify(env), 'utf8'), record });
    this.onChange();
    return env;
  }

  /**
   * Sends kept events again, as a service's late retry would: the same id and
   * the same bytes, signed, queued after what is pending, each to its own
   * workspace's URL. `ids` picks them (default: every event whose delivery
   * `failed` or was `not_sent`); `workspaceId` keeps to one workspace. An
   * event whose workspace has no URL stays as it is. Returns how many were queued.
   */
  redeliver(ids?: readonly string[], workspaceId?: number): number {
    const wanted = ids ? new Set(ids) : null;
    let n = 0;
    for (const env of this.log) {
      const record = this.records.find((r) => r.id === env.id);
      if (!record || record.state === 'pending') continue;
      if (workspaceId !== undefined && record.workspace_id !== workspaceId) continue;
      if (wanted ? !wanted.has(env.id) : record.state !== 'failed' && record.state !== 'not_sent') continue;
      const lane = this.lane(record.workspace_id);
      if (!lane.sends()) continue;
      resetRecord(record);
      if (lane.push({ envelope: env, bytes: Buffer.from(JSON.stringify(env), 'utf8'), record })) n++;
    }
    this.onChange();
    return n;
  }

  /** Every event emitted since the last clear (of one workspace when named), oldest first. */
  events(workspaceId?: number): Envelope[] {
    if (workspaceId === undefined) return [...this.log];
    const ids = new Set(this.records.filter((r) => r.workspace_id === workspaceId).map((r) => r.id));
    return this.log.filter((e) => ids.has(e.id));
  }

  /** Delivery status of every event (of one workspace when named), oldest first. */
  deliveries(workspaceId?: number): DeliveryRecord[] {
    return this.records.filter((r) => workspaceId === undefined || r.workspace_id === workspaceId).map((r) => ({ ...r }));
  }

  /** Forgets the event log and finished deliveries (queued ones keep going). */
  clear(): void {
    this.log.length = 0;
    const live = this.records.filter((r) => r.state === 'pending');
    this.records.length = 0;
    this.records.push(...live);
    this.onChange();
  }

  /** The log, the delivery statuses and the queues, as plain JSON (see {@link SavedEvents}). */
  saved(): SavedEvents {
    return {
      log: [...this.log],
      deliveries: this.deliveries(),
      queue: [...this.lanes.values()].flatMap((lane) => lane.queued()),
    };
  }

  /**
   * Takes back what {@link saved} returned, before any event of this emitter:
   * the queued deliveries go out again (same ids, same bytes) to the URL each
   * workspace has now, from {@link resume}; a delivery that was out when the
   * process ended is sent again, which a receiver's dedupe absorbs. A record
   * saved before workspaces had their own URLs belongs to the first workspace.
   */
  restore(saved: SavedEvents): void {
    this.log.push(...saved.log);
    this.records.push(...saved.deliveries.map((r) => ({ ...r, workspace_id: r.workspace_id ?? this.primary })));
    for (const q of saved.queue) {
      const record = this.records.find((r) => r.id === q.id);
      if (!record) continue;
      const env = saved.log.find((e) => e.id === q.id) ?? (JSON.parse(q.bytes) as Envelope);
      const p: Pending = { envelope: env, bytes: Buffer.from(q.bytes, 'utf8'), record };
      if (!this.lane(record.workspace_id).push(p, false)) Object.assign(record, { state: 'not_sent', next_attempt_at: null });
    }
  }

  /** Starts sending what is queued (restored deliveries wait for this: the sandbox calls it when it listens). */
  resume(): void {
    for (const lane of this.lanes.values()) lane.kick();
  }

  /** Resolves when every queue is empty (every event delivered or given up). */
  async idle(): Promise<void> {
    await Promise.all([...this.lanes.values()].map((lane) => lane.idle()));
  }

  /** Stops retrying; events still queued stay `pending` in the status list. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.lanes.values()].map((lane) => lane.close()));
  }
}
