import { trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';
import { decodeInboxItem, encodeInboxItem } from '../../../src/queue/inbox-item.js';
import type { StoredDelivery } from '../../../src/queue/delivery.js';
import {
  contextOf,
  safePath,
  ingestTracingObserver,
  tracingObserver,
  tracingSettings,
  tracingState,
} from '../../../src/telemetry/index.js';

const config = (env: Record<string, string>) => loadConfig({ WEBHOOK_SECRETS: 's', ...env }, { requireSecrets: true });
const problemsOf = (env: Record<string, string>) => {
  try {
    config(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
};

describe('tracing settings (OTEL_EXPORTER_OTLP_*)', () => {
  it('off unless an OTLP endpoint is set', () => {
    expect(config({}).tracing).toBeUndefined();
    expect(config({ OTEL_SERVICE_NAME: 'x' }).tracing).toBeUndefined();
  });

  it('the general endpoint gets /v1/traces; the traces endpoint is used as given and wins', () => {
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
      url: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      timeoutMs: 10_000,
      serviceName: 'switchyard',
    });
    expect(
      config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/custom' }).tracing?.url,
    ).toBe('https://b/custom');
  });

  it('honours http/json and http/protobuf, headers, timeout and service name; the traces-specific variables win', () => {
    const t = config({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-key=a%20b,other=1',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
      OTEL_SERVICE_NAME: 'sy-prod',
    }).tracing;
    expect(t).toEqual({
      url: 'http://c:4318/v1/traces',
      protocol: 'http/json',
      headers: { 'x-key': 'a b', other: '1' },
      timeoutMs: 2500,
      serviceName: 'sy-prod',
    });
  });

  it('OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn it off', () => {
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' }).tracing).toBeUndefined();
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeUndefined();
  });

  it('an unsupported protocol (grpc is not bundled) is a start-up error naming the variable and the accepted values', () => {
    const problems = problemsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    expect(problems).toHaveLength(1);
    expect(problems[0]?.variable).toBe('OTEL_EXPORTER_OTLP_PROTOCOL');
    expect(problems[0]?.problem).toContain('http/protobuf, http/json');
    expect(problemsOf({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' })[0]?.variable).toBe('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL');
  });

  it('a bad endpoint, header list or timeout is named; header values are never echoed', () => {
    const problems = problemsOf({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://c',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key-secret-value',
      OTEL_EXPORTER_OTLP_TIMEOUT: '-1',
    });
    expect(problems.map((p) => p.variable).sort()).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'OTEL_EXPORTER_OTLP_HEADERS',
      'OTEL_EXPORTER_OTLP_TIMEOUT',
    ]);
    expect(JSON.stringify(problems)).not.toContain('api-key-secret-value');
  });

  it('tracingSettings reads only what it is given', () => {
    expect(tracingSettings({}, [])).toBeUndefined();
  });
});

describe('tracing off', () => {
  it('neither lifecycle stream gets a tracing subscriber, and nothing is registered', () => {
    expect(tracingState.on).toBe(false);
    // The ingest stream (receipt, append, send) and the worker's (fan-out, runs, API calls).
    expect(ingestTracingObserver()).toBeUndefined();
    expect(tracingObserver('http://127.0.0.1:1')).toBeUndefined();
    expect(trace.getTracer('probe').startSpan('probe').isRecording()).toBe(false);
  });
});

describe('trace context carried in the data', () => {
  const base = { key: 'evt_1', name: 'message.received', receivedAt: '2026-11-22T00:00:00.000Z', secretIndex: 0, headers: {} };

  it('an inbox item keeps the traceparent in its meta line, and writes none without one', () => {
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const d: StoredDelivery = { ...base, body: '{"a":1}', traceparent: tp };
    const raw = encodeInboxItem(d);
    expect(raw.split('\n')[0]).toBe(JSON.stringify({ ...base, traceparent: tp }));
    expect(decodeInboxItem(raw)).toEqual(d);
    expect(encodeInboxItem({ ...base, body: '{}' })).not.toContain('traceparent');
  });

  it('a traceparent becomes a remote parent; a malformed or all-zero one starts a new trace', () => {
    const sc = trace.getSpanContext(contextOf('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'));
    expect(sc).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true });
    expect(trace.getSpanContext(contextOf('00-00000000000000000000000000000000-b7ad6b7169203331-01'))).toBeUndefined();
    expect(trace.getSpanContext(contextOf('garbage'))).toBeUndefined();
    expect(trace.getSpanContext(contextOf(undefined))).toBeUndefined();
  });
});

describe('API call paths in spans', () => {
  it('keep ids and words, replace contact identifiers (emails, phones) travelling in the path', () => {
    expect(safePath('/api/v1/contacts/12/labels')).toBe('/api/v1/contacts/12/labels');
    expect(safePath('/api/v1/contacts/email%3Aann%40example.com')).toBe('/api/v1/contacts/{ref}');
    expect(safePath('/api/v1/contacts/phone%3A%2B15551234567/lifecycle')).toBe('/api/v1/contacts/{ref}/lifecycle');
    expect(safePath('/api/v1/contacts/id%3A12')).toBe('/api/v1/contacts/{ref}');
  });
});
