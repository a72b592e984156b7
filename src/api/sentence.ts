/**
 * `text` as a sentence: ends it with a full stop unless it already ends in
 * punctuation. The service's own messages often carry one (`Unauthenticated.`),
 * so text that follows an error message must not add another (`Unauthenticated..`).
 */
export function asSentence(text: string): string {
  const t = text.trimEnd();
  return /[.!?…:;]$/.test(t) ? t : `${t}.`;
}
