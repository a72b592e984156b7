/**
 * The three priority levels of handler runs (their queues, worker slots and
 * share of the API budget), highest first.
 */
export type Priority = 'high' | 'normal' | 'low';
export const PRIORITIES: readonly Priority[] = ['high', 'normal', 'low'];
