/**
 * Data shown on a terminal, made inert: every control character (C0 but for
 * none, DEL, C1), the Unicode line and paragraph separators and the bidi
 * overrides are written as escapes (`\u001b`, `\n`, `\t`, `\u202e`), so an id,
 * a name or an error message taken from a delivery, Redis or an answer cannot
 * move the cursor, recolour the terminal or fake a line of output. JSON output
 * needs none of it (JSON.stringify escapes controls). Every CLI printer passes
 * the data it prints through `printable`; text of several lines is split
 * first and each line passed (`printableLines`).
 */

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

// C0 controls, DEL, C1 controls, U+2028/2029, the bidi embeddings/overrides and isolates.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every control character written as an escape. */
export function printable(text: string): string {
  return text.replace(UNSAFE, (c) => SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Text of several lines: each line made printable (the line breaks kept, a lone `\r` escaped). */
export function printableLines(text: string): string[] {
  return text.split(/\r?\n/).map(printable);
}
