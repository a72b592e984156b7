import type { DeliveryReport, ReceiverHooks } from '../receiver/outcomes.js';
import type { MetricSet } from './definitions.js';

/**
 * Receiver observers feeding the delivery series. Only the outcome, the timing
 * and the secret's index are read: never the key, body or signature.
 */
export function receiverHooksFor(m: MetricSet): ReceiverHooks {
  return {
    onDelivery(report: DeliveryReport): void {
      m.deliveries.inc({ outcome: report.outcome });
      m.ingestDuration.observe({ outcome: report.outcome }, report.ms / 1000);
      if (report.secretIndex !== undefined && Number.isInteger(report.secretIndex) && report.secretIndex >= 0) {
        m.secretIndex.inc({ index: String(report.secretIndex) });
      }
    },
    onDrained(count: number): void {
      if (count > 0) m.spoolDrained.inc(count);
    },
  };
}
