import type { DeliveryOutcome, DeliveryReport, ReceiverHooks } from '../receiver/index.js';
import type { MetricSet } from './definitions.js';

/**
 * Receiver observers feeding the delivery series. Only the outcome, the timing
 * and the secret's index are read: never the key, body or signature. The
 * per-outcome children are bound once (no label object per delivery).
 */
export function receiverHooksFor(m: MetricSet): ReceiverHooks {
  const byOutcome = new Map<DeliveryOutcome, { count: { inc(): void }; time: { observe(v: number): void } }>();
  const bySecret: { inc(): void }[] = [];
  const series = (outcome: DeliveryOutcome) => {
    let s = byOutcome.get(outcome);
    if (!s) byOutcome.set(outcome, (s = { count: m.deliveries.labels(outcome), time: m.ingestDuration.labels(outcome) }));
    return s;
  };
  return {
    onDelivery(report: DeliveryReport): void {
      const s = series(report.outcome);
      s.count.inc();
      s.time.observe(report.ms / 1000);
      const index = report.secretIndex;
      if (index !== undefined && Number.isInteger(index) && index >= 0) {
        (bySecret[index] ??= m.secretIndex.labels(String(index))).inc();
      }
    },
    onDrained(count: number): void {
      if (count > 0) m.spoolDrained.inc(count);
    },
  };
}
