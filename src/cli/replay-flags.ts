import { intFlag, parseCommandArgs, str, strs } from './args.js';
import { UsageError } from './command.js';
import { WORKSPACE_OPTION, eventFlags, timeFlag } from './flags.js';

/** The flags of `replay`, checked. */
export interface ReplayFlags {
  paths: string[];
  to: string | undefined;
  secret: string | undefined;
  direct: boolean;
  inline: boolean;
  reuseKeys: boolean;
  dryRun: boolean;
  handlerId: string | undefined;
  events: string[];
  sinceMs: number | undefined;
  limit: number | undefined;
  concurrency: number;
  newIds: boolean;
  json: boolean;
  verbose: boolean;
  /** `--workspace`: whose receiver, secret, Redis and API. */
  workspace: string | undefined;
}

/** The `replay` command line, checked; undefined for `--help`. */
export function parseReplay(argv: readonly string[]): ReplayFlags | undefined {
  const { values, positionals } = parseCommandArgs(
    argv,
    {
      to: { type: 'string' },
      secret: { type: 'string' },
      direct: { type: 'boolean' },
      inline: { type: 'boolean' },
      event: { type: 'string', multiple: true },
      handler: { type: 'string' },
      since: { type: 'string' },
      limit: { type: 'string' },
      concurrency: { type: 'string' },
      'new-ids': { type: 'boolean' },
      json: { type: 'boolean' },
      verbose: { type: 'boolean' },
      'reuse-keys': { type: 'boolean' },
      'dry-run': { type: 'boolean' },
      ...WORKSPACE_OPTION,
    },
    true,
  );
  if (values.help) return undefined;
  if (positionals.length === 0) throw new UsageError('expected at least one fixture file, directory or .ndjson file');
  if (values.direct && values.inline) throw new UsageError('--direct and --inline exclude each other');
  if (values['reuse-keys'] && !values.inline)
    throw new UsageError('--reuse-keys applies to --inline only (the receiver and workers key their own writes)');
  if (values['dry-run'] && !values.inline) {
    throw new UsageError(
      '--dry-run applies to --inline only: ' + 'over HTTP or with --direct the handlers run in a switchyard process, whose writes are sent',
    );
  }
  const to = str(values, 'to');
  if (to !== undefined && (values.direct || values.inline))
    throw new UsageError('--to applies to HTTP replay only (not with --direct or --inline)');
  const limit = intFlag('limit', str(values, 'limit'), 1, Number.MAX_SAFE_INTEGER);
  const concurrency = intFlag('concurrency', str(values, 'concurrency'), 1, 1000) ?? 8;
  const sinceText = str(values, 'since');
  const sinceMs = sinceText === undefined ? undefined : timeFlag('since', sinceText);
  return {
    paths: positionals,
    to,
    secret: str(values, 'secret'),
    direct: Boolean(values.direct),
    inline: Boolean(values.inline),
    reuseKeys: Boolean(values['reuse-keys']),
    dryRun: Boolean(values['dry-run']),
    handlerId: str(values, 'handler'),
    events: eventFlags(strs(values, 'event')),
    sinceMs,
    limit,
    concurrency,
    newIds: Boolean(values['new-ids']),
    json: Boolean(values.json),
    verbose: Boolean(values.verbose),
    workspace: str(values, 'workspace'),
  };
}
