import type { Config } from '../config/index.js';
import { createLogger, type Logger } from '../log/index.js';
import { RedisServerMissingError } from '../redis/index.js';
import { startService, type ServiceOptions, StateDirBusyError } from '../runtime/index.js';
import { EXIT, type CliIo, type ExitCode } from './command.js';
import { recordReceiver } from './live-receiver.js';

export function processLogger(config: Config, io: CliIo): Logger {
  return createLogger({ level: config.logLevel, pretty: Boolean(io.stdout.isTTY) });
}

/** Runs receiver and/or worker until SIGINT/SIGTERM, then shuts down in order. */
export async function runService(
  io: CliIo,
  roles: { receiver: boolean; worker?: ServiceOptions['worker']; command?: string },
  config: Config,
  log: Logger = processLogger(config, io),
): Promise<ExitCode> {
  let service;
  try {
    service = await startService({
      config,
      log,
      receiver: roles.receiver,
      ...(roles.worker ? { worker: roles.worker } : {}),
      ...(roles.command ? { command: roles.command } : {}),
    });
  } catch (err) {
    if (err instanceof RedisServerMissingError || err instanceof StateDirBusyError) {
      io.stderr.write(`switchyard: ${err.message}\n`);
      return EXIT.failed;
    }
    log.fatal({ err: err instanceof Error ? err.message : String(err) }, 'could not start');
    return EXIT.failed;
  }
  // Commands that own the state directory tell the project's other terminals where they receive (send, replay).
  const forget =
    service.receiver && (roles.command === 'dev' || roles.command === 'start')
      ? recordReceiver(config, io.cwd, roles.command, service.receiver.http.url)
      : () => undefined;
  const stopped = new Promise<void>((res) => {
    if (io.stopSignal.aborted) return res();
    io.stopSignal.addEventListener('abort', () => res(), { once: true });
  });
  const failure = await Promise.race([stopped.then(() => undefined), service.failed]);
  if (failure) log.fatal({ err: failure.message }, 'could not start the worker');
  else log.info('shutting down: no new deliveries accepted, in-flight ones finish');
  forget();
  await service.close();
  return failure ? EXIT.failed : EXIT.ok;
}
