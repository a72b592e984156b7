import type { Logger } from '../log/index.js';
import type { IngestBus } from '../lifecycle/index.js';
import type { IngestStore } from '../queue/index.js';
import type { DiskSpool } from './spool.js';

/**
 * Moves spooled deliveries into Redis once it is back: closed segments in
 * arrival order, each delivery through the same dedupe + inbox script as the
 * webhook route, then the segment is deleted. A crash mid-segment replays the
 * segment on restart; dedupe absorbs the repeats, so nothing is lost or doubled.
 */
export class SpoolDrainer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  drained = 0;

  constructor(
    private readonly spool: DiskSpool,
    private readonly store: IngestStore,
    private readonly log: Logger,
    /** The ingest stream it reports each drained segment on (`drained`). */
    private readonly ingest?: IngestBus,
    private readonly everyMs = 500,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.drainOnce(), this.everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** One pass; concurrent calls share it. Resolves with the number moved. */
  drainOnce(): Promise<void> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(): Promise<void> {
    if (this.spool.segments().length === 0) return;
    this.spool.rotate();
    for (const segment of this.spool.segments()) {
      if (this.spool.isCurrent(segment)) continue;
      let moved = 0;
      const { deliveries, corrupt } = this.spool.read(segment);
      try {
        for (const delivery of deliveries) {
          await this.store.put(delivery);
          moved++;
        }
      } catch (err) {
        // Redis still away: keep the segment, try again on the next pass (dedupe absorbs the repeats).
        this.log.debug({ err: String(err), segment }, 'spool drain paused');
        return;
      }
      if (corrupt.length > 0) {
        const file = this.spool.quarantine(segment, corrupt);
        this.log.error(
          { segment, lines: corrupt.length, file },
          'unreadable lines in a spool segment were set aside; the rest was drained',
        );
      }
      this.spool.remove(segment);
      this.drained += moved;
      this.ingest?.emit({ type: 'drained', count: moved });
      this.log.info({ segment, deliveries: moved }, 'spooled deliveries moved into Redis');
    }
  }
}
