import type { RunNote, RunNoteSink } from '../queue/index.js';
import type { RedisClient } from '../redis/index.js';
import { historyKeys } from './keys.js';
import { cleanText, type OperatorEntry } from './record.js';
import { HISTORY_SCRIPTS } from './scripts.js';
import { MAX_ENTRIES } from './writer.js';

/**
 * Where an operator's cancel or wake of a parked run is recorded
 * (src/queue/waits/ops.ts takes it as its `history`): an `operator` entry in
 * the delivery's history, written at once (the CLI exits right after), and for
 * a cancel the handler's state `cancelled`. The reason is masked as the log
 * masks free text. `ttlMs`: HISTORY_TTL.
 */
export function runNoteWriter(redis: RedisClient, prefix: string, ttlMs: number): RunNoteSink {
  const keys = historyKeys(prefix);
  const lua = HISTORY_SCRIPTS.on(redis);
  return async (deliveryKey: string, note: RunNote): Promise<void> => {
    const entry: OperatorEntry = { kind: 'operator', ...note, ...(note.reason ? { reason: cleanText(note.reason) } : {}) };
    const set = note.action === 'cancel' ? [`h:${note.handler}`, 'cancelled'] : [];
    // historyWrite-3.lua: no index entry (the delivery is indexed at its receipt), no setnx fields, one entry.
    await lua.historyWrite(
      [keys.summary(deliveryKey), keys.entries(deliveryKey), keys.index],
      [ttlMs, MAX_ENTRIES, '', deliveryKey, '', set.length / 2, ...set, 0, JSON.stringify(entry)],
    );
  };
}
