import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsCommand } from '../../../src/cli/events.js';
import { handlersCommand } from '../../../src/cli/handlers.js';
import { sendCommand } from '../../../src/cli/send.js';
import { signCommand } from '../../../src/cli/sign.js';
import { EVENT_NAMES, validateEvent } from '../../../src/events/catalogue.js';
import { parseEnvelope } from '../../../src/events/envelope.js';
import { eventFields } from '../../../src/events/fields.js';
import { applySet, buildDelivery } from '../../../src/replay/index.js';
import { sign, verify } from '../../../src/events/signature.js';
import { testRedisUrl, uniquePrefix } from '../../support/redis.js';
import { startTestService, TEST_SECRET } from '../../support/service.js';
import { memoryIo } from '../../support/io.js';
import { fileURLToPath } from 'node:url';

describe('send: building deliveries', () => {
  it.each(EVENT_NAMES)('builds a valid %s with a fresh id and created_at now', (name) => {
    const now = new Date('2026-01-02T03:04:05.000Z');
    const a = buildDelivery(name, { now: () => now });
    const b = buildDelivery(name, { now: () => now });
    expect(a.validation.ok).toBe(true);
    const env = parseEnvelope(a.bytes);
    expect(env).toMatchObject({ name, createdAt: now.toISOString(), problem: null });
    expect(env.id).toMatch(/^evt_replay_[0-9a-f]{20}$/);
    expect(a.key).not.toBe(b.key);
  });

  it('applies --set (JSON values, data-relative paths, new nested fields) and --data', () => {
    const d = buildDelivery('conversation.closed', {
      sets: ['data.contact_id=42', 'status=closed', 'data.channel.name=Web', 'subject="123"', 'x.y=1', 'id=evt_fixed'],
    });
    const env = JSON.parse(d.bytes.toString()) as { id: string; data: Record<string, unknown> };
    expect(env.id).toBe('evt_fixed');
    expect(env.data).toMatchObject({ contact_id: 42, status: 'closed', subject: '123', x: { y: 1 } });
    expect((env.data['channel'] as { name: string }).name).toBe('Web');
    expect(d.validation.ok).toBe(true);
    const bad = buildDelivery('conversation.closed', { sets: ['data.contact_id=abc'] });
    expect(bad.validation.ok).toBe(false);
    const withData = buildDelivery('lead.won', { data: { id: 1, contact_id: 2, name: 'Deal' }, sets: ['data.value="10.00"'] });
    expect(validateEvent(parseEnvelope(withData.bytes))).toMatchObject({
      ok: true,
      event: { data: { id: 1, contact_id: 2, name: 'Deal', value: '10.00' } },
    });
    expect(() => applySet({}, 'novalue')).toThrow(/path=value/);
    expect(() => buildDelivery('lead.wun')).toThrow(/did you mean "lead.won"/);
  });
});

describe('send over HTTP', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  beforeAll(async () => {
    svc = await startTestService({ REDIS_URL: testRedisUrl(), QUEUE_PREFIX: uniquePrefix('send') });
  });
  afterAll(async () => svc?.close());

  it('signs and sends; the receiver accepts it', async () => {
    const io = memoryIo({ WEBHOOK_SECRETS: TEST_SECRET });
    expect(await sendCommand.run(['conversation.closed', '--set', 'data.contact_id=36', '--to', svc.url], io)).toBe(0);
    expect(io.out()).toMatch(/^accepted conversation\.closed evt_replay_\w+ \(HTTP 202\)/);
  });

  it('next to `npm run dev` (WEBHOOK_SECRETS unset) it signs with the development secret in .switchyard/dev-secret, saying so', async () => {
    const project = mkdtempSync(join(tmpdir(), 'sy-devsecret-'));
    const io = memoryIo({}, { cwd: project });
    await expect(sendCommand.run(['lead.won', '--to', svc.url], io)).rejects.toThrow(
      /no signing secret; pass --secret, set WEBHOOK_SECRETS, or start `npm run dev` \(it keeps one in \.switchyard\/dev-secret\)/,
    );
    mkdirSync(join(project, '.switchyard'));
    writeFileSync(join(project, '.switchyard', 'dev-secret'), TEST_SECRET);
    const send = memoryIo({}, { cwd: project });
    expect(await sendCommand.run(['lead.won', '--to', svc.url], send)).toBe(0);
    expect(send.out()).toMatch(/^accepted lead\.won evt_replay_\w+ \(HTTP 202\)/);
    expect(send.err()).toBe(
      'note: WEBHOOK_SECRETS is unset; signing with the development secret of `npm run dev` (.switchyard/dev-secret)\n',
    );
    expect(send.err()).not.toContain(TEST_SECRET);
    const signed = memoryIo({}, { cwd: project, input: 'x' });
    expect(await signCommand.run(['--value'], signed)).toBe(0);
    expect(signed.out()).toBe(`${sign(TEST_SECRET, 'x')}\n`);
    // SWITCHYARD_HOME moves it, as it moves the managed Redis; WEBHOOK_SECRETS wins over it.
    const moved = memoryIo({ SWITCHYARD_HOME: 'elsewhere' }, { cwd: project });
    await expect(sendCommand.run(['lead.won', '--to', svc.url], moved)).rejects.toThrow(/elsewhere\/dev-secret/);
    const explicit = memoryIo({ WEBHOOK_SECRETS: 'wrong' }, { cwd: project });
    expect(await sendCommand.run(['lead.won', '--to', svc.url], explicit)).toBe(1);
    expect(explicit.err()).toBe('');
  });

  it('refuses invalid data unless --force; --print shows body and header', async () => {
    const io = memoryIo({ WEBHOOK_SECRETS: TEST_SECRET });
    await expect(sendCommand.run(['lead.won', '--set', 'data.id=x', '--to', svc.url], io)).rejects.toThrow(
      /would be invalid[\s\S]*data\.id/,
    );
    expect(await sendCommand.run(['lead.won', '--set', 'data.id=x', '--to', svc.url, '--force'], io)).toBe(0);
    const p = memoryIo({ WEBHOOK_SECRETS: TEST_SECRET });
    expect(await sendCommand.run(['lead.lost', '--print'], p)).toBe(0);
    const [header, body] = p.out().split('\n');
    expect(verify([TEST_SECRET], Buffer.from(body as string), header?.replace(/^x-service-signature: /, ''))).toMatchObject({ ok: true });
    await expect(sendCommand.run([], p)).rejects.toThrow(/exactly one event/);
    await expect(sendCommand.run(['lead.won', '--data', '/nonexistent.json'], p)).rejects.toThrow(/--data/);
    await expect(sendCommand.run(['lead.won', '--direct', '--to', svc.url], p)).rejects.toThrow(/--to applies to HTTP/);
  });
});

describe('sign', () => {
  it('prints the header for a file, for stdin, and --value only; matches sign()', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-sign-'));
    const body = '{"id":"evt_1","event":"lead.won"}\n';
    writeFileSync(join(dir, 'b.json'), body);
    const io = memoryIo({ WEBHOOK_SECRETS: 'whsec_a,whsec_b', SIGNATURE_HEADER: 'X-Custom-Sig' }, { cwd: dir });
    expect(await signCommand.run(['b.json'], io)).toBe(0);
    expect(io.out()).toBe(`x-custom-sig: ${sign('whsec_a', body)}\n`);
    const stdin = memoryIo({}, { input: body });
    expect(await signCommand.run(['-', '--secret', 's2', '--value'], stdin)).toBe(0);
    expect(stdin.out()).toBe(`${sign('s2', body)}\n`);
    await expect(signCommand.run(['b.json'], memoryIo({}, { cwd: dir }))).rejects.toThrow(/WEBHOOK_SECRETS/);
    await expect(signCommand.run(['nope.json', '--secret', 'x'], memoryIo({}, { cwd: dir }))).rejects.toThrow(/cannot read nope\.json/);
  });
});

describe('events and handlers', () => {
  it('lists every event with its data fields; --names; --json; unknown names suggest', async () => {
    const io = memoryIo({});
    expect(await eventsCommand.run([], io)).toBe(0);
    for (const n of EVENT_NAMES) expect(io.out()).toContain(`${n}\n`);
    expect(io.out()).toContain('  data.contact_id  int');
    const names = memoryIo({});
    await eventsCommand.run(['--names'], names);
    expect(names.out().trim().split('\n')).toEqual([...EVENT_NAMES]);
    const json = memoryIo({});
    await eventsCommand.run(['lead.won', '--json'], json);
    expect(JSON.parse(json.out())).toEqual([{ name: 'lead.won', fields: eventFields('lead.won') }]);
    await expect(eventsCommand.run(['lead.wom'], io)).rejects.toThrow(/did you mean "lead.won"/);
  });

  it('handlers lists the recipes with their events and abilities', async () => {
    const io = memoryIo({ HANDLERS_DIR: fileURLToPath(new URL('../../../handlers', import.meta.url)) });
    expect(await handlersCommand.run(['--json'], io)).toBe(0);
    const rows = JSON.parse(io.out()) as { id: string; on: string[]; abilities: string[] }[];
    expect(rows.find((r) => r.id === 'follow-up-task')).toMatchObject({
      on: ['conversation.closed'],
      abilities: ['contacts:read', 'tasks:write'],
    });
    const text = memoryIo({ HANDLERS_DIR: fileURLToPath(new URL('../../../handlers', import.meta.url)) });
    await handlersCommand.run([], text);
    expect(text.out()).toMatch(/follow-up-task\n {2}on: {8}conversation\.closed\n {2}abilities: contacts:read, tasks:write/);
  });
});
