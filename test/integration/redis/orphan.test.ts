import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startManagedRedis, type ManagedRedis } from '../../../src/redis/managed.js';
import { findServerOn, stopFoundServer } from '../../../src/redis/orphan.js';

// A redis-server still serving a managed data directory: found by its process
// (Linux /proc) and by the port of the URL file its owner left, and stopped.
describe('a redis-server found on a data directory', () => {
  const root = mkdtempSync(join(tmpdir(), 'sy-orphan-'));
  const started: ManagedRedis[] = [];
  const start = async (name: string) => {
    const server = await startManagedRedis({ dir: join(root, name) });
    started.push(server);
    const urlFile = join(root, `${name}.url`);
    writeFileSync(urlFile, `${server.url}\n`);
    return { server, urlFile };
  };
  afterEach(async () => {
    await Promise.all(started.splice(0).map((s) => s.stop()));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('found by its process and by its URL file, with this process (its owner, through the owner watch) named', async () => {
    const { server, urlFile } = await start('owned');
    const found = await findServerOn(server.dir, urlFile);
    expect(found).toEqual({ pid: server.pid, owner: process.pid, port: server.port });
  });

  it('none on a directory no server serves, nor through a URL file whose port answers for another directory', async () => {
    const { urlFile } = await start('other');
    mkdirSync(join(root, 'empty'));
    expect(await findServerOn(join(root, 'empty'), join(root, 'missing.url'))).toBeNull();
    expect(await findServerOn(join(root, 'empty'), urlFile)).toBeNull();
    writeFileSync(join(root, 'garbled.url'), 'not a url');
    expect(await findServerOn(join(root, 'empty'), join(root, 'garbled.url'))).toBeNull();
  });

  it('stopped by its pid: gone afterwards, and no longer found', async () => {
    const { server, urlFile } = await start('by-pid');
    const found = await findServerOn(server.dir, urlFile);
    expect(found?.pid).toBe(server.pid);
    expect(await stopFoundServer(found!)).toBe(true);
    expect(await findServerOn(server.dir, urlFile)).toBeNull();
  });

  it('stopped over its port when only the port is known (SHUTDOWN)', async () => {
    const { server, urlFile } = await start('by-port');
    expect(await stopFoundServer({ port: server.port })).toBe(true);
    expect(await findServerOn(server.dir, urlFile)).toBeNull();
  });
});
