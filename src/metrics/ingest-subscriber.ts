import type { IngestSubscriber, DeliveryOutcome } from '../lifecycle/index.js';
import { DELIVERY_OUTCOMES, type MetricSet } from './definitions.js';

/**
 * The delivery series as a subscriber of the ingest stream: each answer's
 * outcome, timing and secret index, and the spool's drains. Only those are
 * read: never the key, body or signature. The per-outcome children are bound
 * once (no label object per delivery). Each series is the `workspace`'s; its outcomes
 * are pre-set to 0 so each exists from the first scrape.
 */
export function ingestSubscriber(m: MetricSet, workspace: string): IngestSubscriber {
  for (const outcome of DELIVERY_OUTCOMES) m.deliveries.inc({ outcome, workspace }, 0);
  const byOutcome = new Map<DeliveryOutcome, { count: { inc(): void }; time: { observe(v: number): void } }>();
  const bySecret: { inc(): void }[] = [];
  const series = (outcome: DeliveryOutcome) => {
    let s = byOutcome.get(outcome);
    if (!s)
      byOutcome.set(outcome, (s = { count: m.deliveries.labels(outcome, workspace), time: m.ingestDuration.labels(outcome, workspace) }));
    return s;
  };
  return {
    answered: (e) => {
      if (!e.ok) return;
      const { report } = e;
      const s = series(report.outcome);
      s.count.inc();
      s.time.observe(report.ms / 1000);
      const index = report.secretIndex;
      if (index !== undefined && Number.isInteger(index) && index >= 0) {
        (bySecret[index] ??= m.secretIndex.labels(String(index), workspace)).inc();
      }
    },
    drained: ({ count }) => {
      if (count > 0) m.spoolDrained.inc({ workspace }, count);
    },
  };
}
