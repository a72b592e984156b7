// Live traffic beside a bulk job (bench/reconcile part B, bench/rerun): new customers writing on new threads
// at a steady rate, each thread's send time kept, and the latency figures of their replies.
import { sleep } from './proc.js';

/** `rate` customers a second, each from `inbound(n)` (the new thread's conversation id, if it got one). */
export function liveCustomers(inbound: (n: number) => Promise<number | undefined>, rate: number) {
  const sentAt = new Map<number, number>();
  let live = true;
  const running = (async () => {
    const every = 1000 / rate;
    let next = Date.now();
    for (let n = 0; live; n++) {
      next += every;
      const t0 = Date.now();
      const id = await inbound(n);
      if (id !== undefined) sentAt.set(id, t0);
      await sleep(Math.max(0, next - Date.now()));
    }
  })();
  return {
    /** Conversation id → when its customer wrote (ms). */
    sentAt,
    async stop(): Promise<void> {
      live = false;
      await running;
    },
  };
}

/** The p-th percentile (nearest rank). */
export const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : (s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] as number);
};

export const summary = (xs: number[]) => ({ n: xs.length, p50: pct(xs, 50), p95: pct(xs, 95), p99: pct(xs, 99), max: Math.max(...xs) });
