/** Did-you-mean suggestions for misspelled names (event names, abilities, flags). */

/** Optimal-string-alignment distance: Levenshtein plus adjacent transpositions ("recieved"). */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, at(i - 2, j - 2) + 1);
      row[j] = v;
    }
  }
  return at(a.length, b.length);
}

/**
 * The candidate closest to `input` by edit distance (case-insensitive), or
 * null when none is within max(2, a quarter of the input's length): a guess
 * further away than that misleads more than it helps. Ties go to the earlier candidate.
 */
export function closest<T extends string>(input: string, candidates: readonly T[]): T | null {
  const needle = input.trim().toLowerCase();
  const limit = Math.max(2, Math.floor(needle.length / 4));
  let best: T | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const dist = editDistance(needle, c.toLowerCase());
    if (dist < bestDistance) [best, bestDistance] = [c, dist];
  }
  return bestDistance <= limit ? best : null;
}
