/**
 * How a re-run (`switchyard rerun`) and the delivery it ran again point at each other in the history. The re-run
 * has a history of its own under its job id (`r/<key>/<handler>/<rerun id>`, not in the time index: `deliveries`
 * lists the original, not its re-runs), whose summary names the original (`rerunOf`, `rerunJob`, `rerunId`,
 * `batch`, `fromStep`); the original's summary has one field `r:<re-run's job id>` per re-run, its latest state.
 */

/** A re-run of a delivery, as the original's history lists it. */
export interface RerunLink {
  /** The re-run's job id (`switchyard trace` takes it). */
  readonly ref: string;
  readonly id: string;
  readonly handler: string;
  readonly batch: string | null;
  readonly fromStep: string | null;
  /** Its latest attempt's outcome. */
  readonly outcome: string;
  /** When its latest attempt ended (ms). */
  readonly at: number;
}

/** What a re-run's own history says of the run it re-ran. */
export interface RerunOf {
  /** The original delivery's key. */
  readonly key: string;
  /** The original run's job id (`d/<key>/<handler>`). */
  readonly job: string;
  readonly id: string;
  readonly batch: string | null;
  readonly fromStep: string | null;
}

/** The summary field of a re-run on its original's summary. */
export const rerunField = (ref: string): string => `r:${ref}`;

/** The value of that field. */
export function rerunValue(l: Omit<RerunLink, 'ref'>): string {
  return JSON.stringify(l);
}

/** The re-runs an original's summary lists, oldest first. */
export function rerunsOf(h: Record<string, string>): RerunLink[] {
  const out: RerunLink[] = [];
  for (const [f, v] of Object.entries(h)) {
    if (!f.startsWith('r:')) continue;
    try {
      out.push({ ...(JSON.parse(v) as Omit<RerunLink, 'ref'>), ref: f.slice(2) });
    } catch {
      /* a field cut by hand: left out */
    }
  }
  return out.sort((a, b) => a.at - b.at);
}

/** The run a re-run's summary says it re-ran; null for a delivery's own history. */
export function rerunOf(h: Record<string, string>): RerunOf | null {
  const key = h['rerunOf'];
  if (key === undefined) return null;
  return { key, job: h['rerunJob'] ?? '?', id: h['rerunId'] ?? '?', batch: h['batch'] ?? null, fromStep: h['fromStep'] ?? null };
}
