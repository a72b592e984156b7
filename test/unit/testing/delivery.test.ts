import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { WorkspaceEvent } from '../../../src/events/catalogue.js';
import { verify } from '../../../src/events/signature.js';
import { DeliveryError, loadFixture, readDelivery, signDelivery, toEvent } from '../../../src/testing/index.js';
import { match } from '../../support/match.js';

const FIXTURES = new URL('../../../fixtures/', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'sy-testing-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('switchyard/testing deliveries', () => {
  it('loadFixture gives the shipped fixture of an event, byte for byte, and toEvent the event its handler receives', async () => {
    const d = await loadFixture('message.received');
    const fixture = JSON.parse(readFileSync(new URL('message.received.json', FIXTURES), 'utf8')) as { body: string };
    expect(d.bytes.toString('utf8')).toBe(fixture.body);
    expect(d.headers['content-type']).toBe('application/json');
    const event = toEvent(d, 'message.received');
    expectTypeOf(event).toEqualTypeOf<WorkspaceEvent<'message.received'>>();
    expect(event).toMatchObject({ id: 'evt_01JNK7Q2M8V4D9XG3T5R6Y1A0B', name: 'message.received', data: { id: 39, conversation_id: 38 } });
  });

  it('loadFixture of an unknown event name says so with a did-you-mean', async () => {
    const err = await loadFixture('message.recieved' as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeliveryError);
    expect((err as DeliveryError).message).toBe(
      'no fixture for unknown event "message.recieved"; did you mean "message.received"? (expected one of EVENT_NAMES)',
    );
  });

  it('readDelivery takes a plain envelope file as its exact bytes, and a malformed fixture or a missing file as a clear error', async () => {
    const text = '{ "id": "evt_1", "event": "lead.won", "created_at": null, "data": {"id": 48, "contact_id": 35, "status": "won"} }';
    writeFileSync(join(dir, 'won.json'), text);
    const d = await readDelivery(join(dir, 'won.json'));
    expect(d).toMatchObject({ source: join(dir, 'won.json'), headers: {}, receivedAt: undefined });
    expect(d.bytes.toString('utf8')).toBe(text);

    writeFileSync(join(dir, 'bad.json'), '{"format":"switchyard.delivery/1","headers":{}}');
    await expect(readDelivery(join(dir, 'bad.json'))).rejects.toThrow(/bad\.json: not a valid fixture: .*expected exactly one of "body"/);
    await expect(readDelivery(join(dir, 'nope.json'))).rejects.toThrow(
      new DeliveryError(`${join(dir, 'nope.json')}: cannot be read (ENOENT); expected a fixture or an event envelope JSON file`),
    );
  });

  it('toEvent refuses what the worker would dead-letter, saying why, and an event of another name', async () => {
    const invalid = await readDelivery(new URL('_malformed/unknown-event.json', FIXTURES).pathname);
    expect(() => toEvent(invalid)).toThrow(/unknown-event\.json: not a valid event \(unknown_event\): unknown event/);
    expect(() => toEvent(Buffer.from('[1]'))).toThrow(
      'the delivery: not a valid event (not_an_object): the body is JSON but not an object',
    );
    const won = await loadFixture('lead.won');
    expect(() => toEvent(won, 'lead.lost')).toThrow(/is a "lead.won" event, expected "lead.lost"/);
  });

  it('signDelivery signs the exact bytes as the workspace does: the receiver verifies it', async () => {
    const d = await loadFixture('conversation.closed');
    const withExtra = { ...d, headers: { ...d.headers, host: 'example.test', 'x-request-id': 'r1' } };
    const { body, headers } = signDelivery(withExtra, 'whsec_test');
    expect(body.equals(d.bytes)).toBe(true);
    expect(verify(['other', 'whsec_test'], body, headers['x-service-signature'])).toEqual({ ok: true, secretIndex: 1 });
    expect(headers).toEqual({
      'content-type': 'application/json',
      'user-agent': d.headers['user-agent'],
      'x-request-id': 'r1',
      'x-service-signature': match.stringMatching(/^sha256=[0-9a-f]{64}$/),
    });

    const custom = signDelivery('{"event":"lead.won"}', 's', { header: 'X-Acme-Signature' });
    expect(verify(['s'], custom.body, custom.headers['x-acme-signature'])).toEqual({ ok: true, secretIndex: 0 });
    expect(() => signDelivery(d, '')).toThrow(/secret must be a non-empty string/);
  });
});
