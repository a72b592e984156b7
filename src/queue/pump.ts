import { randomBytes } from 'node:crypto';
import type { JobsOptions, Queue } from 'bullmq';
import type { Logger } from '../log/index.js';
import { jobIdFor } from '../events/index.js';
import type { StoredDelivery } from './delivery.js';
import { decodeInboxItem } from './inbox-item.js';
import { EVENTS_JOB_OPTIONS } from './job-options.js';
import { trimPendingFanOut } from './flow-pending.js';
import { ingestKeys } from './names.js';
import type { RedisClient } from '../redis/index.js';
import { queueScripts } from './scripts.js';
import { sleep } from '../util/index.js';
import type { IngestBus, PumpFacts } from '../lifecycle/index.js';

/** One `events` job of a batch. */
interface PumpJob {
  readonly name: string;
  readonly data: StoredDelivery;
  readonly opts: JobsOptions & { readonly jobId: string };
}

export interface IngestPumpOptions {
  /** Connection for ordinary commands (worker role: retries through outages). */
  redis: RedisClient;
  /** Dedicated connection for the blocking BLMOVE. */
  blocking: RedisClient;
  events: Queue;
  prefix: string;
  /** The ingest stream it reports each delivery it queues on (`pumping`, `pumped`): tracing's send spans. */
  ingest?: IngestBus;
  log: Logger;
  batchSize?: number;
  heartbeatMs?: number;
  /**
   * After the first delivery of a batch arrives, wait this long (ms) for more
   * before taking the rest, when the previous batch was not full. Under load
   * this turns many small batches (each with its fixed round trips) into few
   * large ones; idle, it delays queueing by at most this much. The waiting
   * delivery is already in the in-flight list, so a crash loses nothing.
   * Default 5; 0 disables.
   */
  lingerMs?: number;
}

/**
 * Moves deliveries from the ingest inbox into the BullMQ `events` queue.
 * Each process with a worker runs one (INGEST_PUMP=auto; `on` adds receivers);
 * the pumps cooperate through Redis:
 * each pump moves a batch to its own in-flight list, adds it with `addBulk`
 * (job id = delivery key), then drops the list. A pump that dies mid-batch
 * leaves its list behind; the others return it to the inbox once its
 * heartbeat lapses. So nothing acknowledged is lost and nothing is queued twice.
 */
export class IngestPump {
  readonly id = randomBytes(6).toString('hex');
  private readonly keys;
  private readonly scripts;
  private running = false;
  private loop: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly batch: number;
  private readonly heartbeatMs: number;
  private readonly lingerMs: number;
  /** Deliveries moved into the `events` queue by this pump. */
  moved = 0;

  constructor(private readonly opts: IngestPumpOptions) {
    this.keys = ingestKeys(opts.prefix);
    this.scripts = queueScripts(opts.redis);
    this.batch = opts.batchSize ?? 200;
    this.heartbeatMs = opts.heartbeatMs ?? 5_000;
    this.lingerMs = opts.lingerMs ?? 5;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.beat();
    this.timer = setInterval(() => void this.beat().then(() => this.recoverDead()), this.heartbeatMs);
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearInterval(this.timer);
    // Wake the blocking BLMOVE: disconnecting the dedicated connection ends it.
    this.opts.blocking.disconnect();
    await this.loop;
    // Our in-flight list is empty unless a batch failed; leaving it lets another pump recover it.
    await this.opts.redis.del(this.keys.heartbeat(this.id)).catch(() => undefined);
  }

  private async beat(): Promise<void> {
    const { redis } = this.opts;
    await redis
      .multi()
      .set(this.keys.heartbeat(this.id), '1', 'PX', this.heartbeatMs * 3)
      .sadd(this.keys.pumps, this.id)
      .exec()
      .catch((err: unknown) => this.opts.log.debug({ err }, 'pump heartbeat failed'));
    // What a lost delivery left in the pending fan-out set goes in time (src/queue/flow-pending.ts).
    await trimPendingFanOut(redis, this.opts.prefix).catch((err: unknown) => this.opts.log.debug({ err }, 'pending fan-out trim failed'));
  }

  /** Returns the in-flight items of pumps whose heartbeat lapsed to the inbox. */
  async recoverDead(): Promise<number> {
    const { redis } = this.opts;
    let recovered = 0;
    try {
      const ids = await redis.smembers(this.keys.pumps);
      for (const id of ids) {
        if (id === this.id) continue;
        const n = await this.scripts.pumpRecover(
          { inflight: this.keys.inflight(id), inbox: this.keys.inbox, heartbeat: this.keys.heartbeat(id), pumps: this.keys.pumps },
          id,
        );
        if (n > 0) this.opts.log.warn({ pump: id, deliveries: n }, 'recovered in-flight deliveries of a stopped pump');
        if (n > 0) recovered += n;
      }
    } catch (err) {
      this.opts.log.debug({ err }, 'pump recovery skipped');
    }
    return recovered;
  }

  private async run(): Promise<void> {
    const { redis, blocking, log } = this.opts;
    const inflight = this.keys.inflight(this.id);
    let failures = 0;
    // Our in-flight list can hold a batch from before (a failed add): finish it first.
    let leftover = true;
    let lastFull = false;
    while (this.running) {
      try {
        let items = leftover ? await redis.lrange(inflight, 0, -1) : [];
        leftover = false;
        // After a full batch there is likely more: take it without the blocking round trip.
        if (items.length === 0 && lastFull) items = await this.scripts.pumpTakeMore(this.keys.inbox, inflight, this.batch);
        if (items.length === 0) {
          const first = await blocking.blmove(this.keys.inbox, inflight, 'LEFT', 'RIGHT', 1);
          if (first === null) continue;
          if (!lastFull && this.lingerMs > 0) await sleep(this.lingerMs);
          items = await this.scripts.pumpTakeMore(this.keys.inbox, inflight, this.batch - 1);
        }
        await this.add(items);
        await redis.del(inflight);
        lastFull = items.length >= this.batch;
        this.moved += items.length;
        failures = 0;
      } catch (err) {
        leftover = true; // a reply may have been lost after the in-flight list changed: look again
        if (!this.running) break;
        failures++;
        if (failures === 1 || failures % 50 === 0) log.warn({ err: String(err) }, 'ingest pump cannot reach Redis; retrying');
        await sleep(Math.min(100 * failures, 2_000));
      }
    }
  }

  /** Queues a batch; observed (each job carrying the trace context its `pumping` scope gave) when anyone subscribes. */
  private async addBulk(jobs: PumpJob[]): Promise<void> {
    const { events, ingest } = this.opts;
    if (!ingest?.wants('pumping')) {
      await events.addBulk(jobs);
      return;
    }
    const facts = jobs.map((j): PumpFacts => ({
      key: j.data.key,
      name: j.data.name,
      jobId: j.opts.jobId,
      queue: events.name,
      batch: jobs.length,
      traceparent: j.data.traceparent,
    }));
    await ingest.pump(facts, (carried) =>
      events.addBulk(jobs.map((j, i) => (carried[i] === undefined ? j : { ...j, data: { ...j.data, traceparent: carried[i] } }))),
    );
  }

  private async add(items: string[]): Promise<void> {
    const jobs: PumpJob[] = [];
    const unreadable: string[] = [];
    for (const raw of items) {
      let d: StoredDelivery;
      try {
        d = decodeInboxItem(raw);
      } catch {
        unreadable.push(raw);
        continue;
      }
      jobs.push({ name: d.name ?? 'unknown', data: d, opts: { ...EVENTS_JOB_OPTIONS, jobId: jobIdFor(d.key) } });
    }
    // Each one is pending fan-out since the ingest script stored it, until the events worker has fanned it out.
    if (jobs.length > 0) await this.addBulk(jobs);
    if (unreadable.length > 0) {
      // Only Switchyard writes the inbox, so this is a bug, tampering or a newer
      // writer: set the items aside where an operator can look, and keep moving.
      await this.opts.redis.rpush(this.keys.unreadable, ...unreadable);
      this.opts.log.error(
        { items: unreadable.length, list: this.keys.unreadable },
        'unreadable inbox items set aside; the rest of the batch was queued',
      );
    }
  }
}
