/**
 * Personal data inside free text: emails and phone numbers. Shared by the log
 * redaction (masks them) and the capture redaction (swaps in stable fakes), so
 * both agree on what a phone number is.
 *
 * A number counts as a phone number only when it looks like one: a leading `+`
 * (`+49 30 1234567`, `+14155550123`), an area code in parentheses
 * (`(555) 010-9999`), the 3-3-4 grouping (`555-010-9999`, `555.010.9999`), an
 * international `00` prefix with separators (`0049 30 1234567`) or a trunk `0`
 * with a separator (`030 1234567`, `0170-1234567`). IP addresses, `host:port`,
 * file paths (`/var/spool/0123/4567890`), dates and timestamps, versions,
 * durations and plain ids or order numbers (`100123456`) are left alone: they
 * are not personal data, and masking them makes logs useless
 * (`connect ECONNREFUSED 127.0.0.1:6379`).
 */

/** Field names whose value is a phone number, whatever it looks like. */
export const PHONE_FIELDS: readonly string[] = ['phone', 'phone_number', 'mobile', 'msisdn', 'wa_id', 'whatsapp'];

/** Field names whose value is an email address. */
export const EMAIL_FIELDS: readonly string[] = ['email', 'email_address'];

// Starts only where a local part starts: without the lookbehind a long run of
// digits and dots is rescanned from every position (quadratic time).
const EMAIL = /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;

/**
 * Not glued to a word, not a path segment (`/var/spool/0123`), and not the continuation of an address, date or version
 * (`10.0.0.1:`, `2024-`).
 */
const START = String.raw`(?<![\w./]|\d[:-])`;
/** Not followed by more of a word, path, address, date or version. */
const END = String.raw`(?![\w@]|[.:/-]\d|\/\w)`;

const SHAPES = [
  // International: + then digit groups; "(0)" and "(30)" allowed.
  String.raw`(?<![\w+])\+\d+(?:[ .-]?\(\d+\)[ .-]?\d+|[ .-]\d+)*`,
  // International with the 00 prefix and separators: "0049 30 1234567", "0044-20-7946-0958".
  String.raw`${START}00[1-9]\d{0,3}(?:[ .-]\d+)+`,
  // Area code in parentheses.
  String.raw`${START}\(\d{2,5}\)[ -]?\d{2,}(?:[ .-]\d{2,})*`,
  // 3-3-4 with one separator throughout.
  String.raw`${START}\d{3}([ .-])\d{3}\1\d{4}`,
  // National with a trunk 0: "030 1234567", "0170-1234567", "020 7946 0958".
  String.raw`${START}0\d{1,4}[ /-]\d{3,}(?:[ -]\d{2,})*`,
];
const PHONE = new RegExp(`(?:${SHAPES.join('|')})${END}`, 'g');

/** At least 7 digits (a subscriber number) and at most 15 (E.164), plus a bracketed trunk "(0)". */
function phoneDigits(candidate: string): boolean {
  const digits = candidate.replace(/\(0\)/, '').replace(/\D/g, '').length;
  return digits >= 7 && digits <= 15;
}

/** Replaces every phone number in `text` by `fake(original)`. */
export function replacePhones(text: string, fake: (original: string) => string): string {
  return text.replace(PHONE, (m) => (phoneDigits(m) ? fake(m) : m));
}

/** Replaces every email address in `text` by `fake(original)`. */
export function replaceEmails(text: string, fake: (original: string) => string): string {
  return text.replace(EMAIL, fake);
}

const QUOTED_FIELD = new RegExp(`("(?:${[...PHONE_FIELDS, ...EMAIL_FIELDS].join('|')})"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`, 'g');

/**
 * Masks emails and phone numbers in free text (`[email]`, `[phone]`), and the
 * value of a quoted phone or email field however it looks (`"phone":"5550100"`
 * in an error message quoting a request body).
 */
export function maskPersonalText(text: string): string {
  const fields = text.replace(QUOTED_FIELD, (_m, key: string) => `${key}"[${/mail/.test(key) ? 'email' : 'phone'}]"`);
  return replacePhones(
    replaceEmails(fields, () => '[email]'),
    () => '[phone]',
  );
}
