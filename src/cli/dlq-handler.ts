import { secretVariables, type Config } from '../config/index.js';
import { dropSecrets, loadHandlerDir } from '../handler/index.js';
import { listDead, type DlqQueues } from '../queue/index.js';
import { closest, printable } from '../util/index.js';

/** The handler and schedule ids of HANDLERS_DIR, or why they could not be read. */
async function moduleIds(config: Config): Promise<{ ids: string[]; problem: string | null }> {
  dropSecrets(process.env, secretVariables(config)); // handler modules run their top-level code in this process
  try {
    const { handlers, schedules } = await loadHandlerDir(config.handlersDir, config.handlers);
    return { ids: [...handlers.map((h) => h.handler.id), ...schedules.map((s) => s.schedule.id)], problem: null };
  } catch (err) {
    return { ids: [], problem: err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err) };
  }
}

/**
 * Why `--handler <name>` names no handler, or null when it names one: a
 * handler or schedule of HANDLERS_DIR, or one a dead-lettered job names (jobs
 * of a deployment whose modules are not here). With a did-you-mean among them.
 */
export async function unknownHandler(name: string, q: DlqQueues, config: Config): Promise<string | null> {
  const [modules, dead] = await Promise.all([moduleIds(config), listDead(q, {})]);
  const known = [...new Set([...modules.ids, ...dead.map((e) => e.handler).filter((h): h is string => h !== null)])].sort();
  if (known.includes(name)) return null;
  const hint = closest(name, known);
  const where =
    modules.problem === null
      ? `the handlers and schedules of ${config.handlersDir}`
      : `HANDLERS_DIR (${config.handlersDir}: ${modules.problem})`;
  return (
    `--handler: no handler or schedule "${printable(name)}" in ${where} or among the dead-lettered jobs` +
    `${hint ? `; did you mean "${hint}"?` : ''} (known: ${known.length ? known.map(printable).join(', ') : 'none'})`
  );
}
