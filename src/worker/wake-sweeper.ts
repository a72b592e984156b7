import { sweepWakes, type EventWaitsDeps } from './waits.js';

/** How often the wake-ups left by a dead waker are looked for. */
export const WAKE_SWEEP_EVERY_MS = 1_000;

/**
 * Redoes the wake-ups an event queued whose waker died before promoting the
 * run (./waits.ts {@link sweepWakes}: after 5 s of grace), every
 * {@link WAKE_SWEEP_EVERY_MS}, off the event loop's keep-alive; a failed sweep
 * is logged at debug and tried again at the next tick. Returns its stop.
 */
export function startWakeSweeper(ports: Pick<EventWaitsDeps, 'waits' | 'wake' | 'log'>): () => void {
  const sweeper = setInterval(() => {
    sweepWakes(ports, Date.now()).catch((err: unknown) => ports.log.debug({ err: String(err) }, 'wake sweep failed'));
  }, WAKE_SWEEP_EVERY_MS);
  sweeper.unref();
  return () => clearInterval(sweeper);
}
