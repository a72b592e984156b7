/** Every way a webhook request can end; the metrics label and the log field. */
export type DeliveryOutcome = 'accepted' | 'duplicate' | 'spooled' | 'bad_signature' | 'too_large' | 'timeout' | 'unavailable';

export interface DeliveryReport {
  readonly outcome: DeliveryOutcome;
  readonly key?: string;
  readonly event?: string | null;
  readonly secretIndex?: number;
  readonly bytes?: number;
  readonly ms: number;
  /** For bad_signature: missing, malformed or mismatch. */
  readonly reason?: string;
}

/** Observers of the webhook route (metrics, capture); called after the answer is decided. */
export interface ReceiverHooks {
  onDelivery?: (report: DeliveryReport) => void;
  /** A verified delivery was stored (accepted or spooled): capture writes it off the hot path. */
  onStored?: (delivery: { key: string; bytes: Uint8Array; headers: Record<string, string>; receivedAt: string }) => void;
  /** Spooled deliveries were moved into Redis. */
  onDrained?: (count: number) => void;
}
