// Counts the commands this process sends to Redis, per connection name and command (a script by its sha's
// first 8 characters), and its socket writes, by wrapping ioredis' Redis.prototype.sendCommand. For benchmarks only (CLIENTCMDS=1):
// Redis' own commandstats count what scripts call too; this counts what crosses the client, where each
// command costs the process its ioredis and BullMQ work.
import { Socket } from 'node:net';
import { Redis } from 'ioredis';

export interface ClientCommandCounter {
  start(): void;
  /** The counts since start(), largest first. */
  stop(): [string, number][];
}

type Send = (this: Redis, command: { name: string; args: unknown[] }, stream?: unknown) => unknown;

export function countClientCommands(): ClientCommandCounter {
  const counts = new Map<string, number>();
  let on = false;
  const proto = Redis.prototype as unknown as { sendCommand: Send };
  const send = proto.sendCommand;
  // Socket writes of this process (every connection: ioredis writes a command, a pipeline or an auto-pipelined
  // batch in one write), counted as `(socket writes)`: each costs a system call and wakes redis-server.
  const socket = Socket.prototype as unknown as { write: (...args: unknown[]) => boolean };
  const write = socket.write;
  socket.write = function (this: Socket, ...args: unknown[]) {
    if (on) counts.set('(socket writes)', (counts.get('(socket writes)') ?? 0) + 1);
    return write.apply(this, args);
  };
  proto.sendCommand = function (this: Redis, command, stream) {
    if (on) {
      const script = command.name === 'evalsha' ? `:${String(command.args[0]).slice(0, 8)}` : '';
      const key = `${this.options.connectionName ?? '(unnamed)'} ${command.name}${script}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return send.call(this, command, stream);
  };
  return {
    start: () => {
      counts.clear();
      on = true;
    },
    stop: () => {
      on = false;
      return [...counts].sort((a, b) => b[1] - a[1]);
    },
  };
}
