/**
 * The deliveries page's query box: the text of its `where` field as the list of expressions the CLI gets from its
 * repeated `--where`. Expressions are separated by spaces or new lines; a value holding spaces is quoted as in a
 * shell (`data.body~"refund request"`, `'data.body~refund request'`).
 */

/** One word: runs of plain characters and quoted parts, up to the next space outside quotes. */
const WORD = /(?:[^\s"']+|"[^"]*"|'[^']*')+/g;

/** The expressions in `text`, quotes removed; a problem (in words) when a quote is not closed. */
export function whereTerms(text: string): { terms: string[] } | { problem: string } {
  const terms: string[] = [];
  for (const [n, line] of text.split(/\r?\n/).entries()) {
    const words = line.match(WORD) ?? [];
    const rest = line.replace(WORD, '').trim();
    if (rest !== '') {
      return {
        problem: `line ${n + 1}: a quote (${rest[0]}) is not closed; quote a value holding spaces whole, e.g. data.body~"refund request"`,
      };
    }
    for (const w of words) terms.push(w.replace(/"([^"]*)"|'([^']*)'/g, (_, d?: string, s?: string) => d ?? s ?? ''));
  }
  return { terms };
}
