import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One exported span, decoded from OTLP/HTTP (JSON or protobuf) into one shape. */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  resource: Record<string, string | number | boolean>;
}

export interface OtlpCollector {
  /** Base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (`/v1/traces` is appended by the exporter). */
  readonly url: string;
  readonly spans: CollectedSpan[];
  /** Every request body received, as received (to search exported bytes for what must never be there). */
  readonly bodies: Buffer[];
  /** Content types of the requests (kept with `discard` too: one per export request). */
  readonly contentTypes: string[];
  close(): Promise<void>;
}

/**
 * A tiny OTLP/HTTP trace collector on 127.0.0.1: accepts POST /v1/traces in
 * `application/json` or `application/x-protobuf`, decodes the spans, answers 200.
 * `discard`: keep no body and no span (benchmarks).
 */
export async function startOtlpCollector(opts: { discard?: boolean } = {}): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const bodies: Buffer[] = [];
  const contentTypes: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      if (!opts.discard) chunks.push(c);
    });
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const type = String(req.headers['content-type'] ?? '');
      contentTypes.push(type);
      if (!opts.discard) {
        const body = Buffer.concat(chunks);
        bodies.push(body);
        spans.push(...(type.includes('json') ? decodeJson(body) : decodeProtobuf(body)));
      }
      const json = String(req.headers['content-type'] ?? '').includes('json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : Buffer.alloc(0));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    contentTypes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ── OTLP/JSON ───────────────────────────────────────────────────────────────

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
}
interface JsonKeyValue {
  key: string;
  value: JsonAnyValue;
}
interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: JsonKeyValue[];
  status?: { code?: number };
}
interface JsonTraces {
  resourceSpans?: { resource?: { attributes?: JsonKeyValue[] }; scopeSpans?: { spans?: JsonSpan[] }[] }[];
}

function jsonAttributes(kvs: JsonKeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of kvs ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
  }
  return out;
}

function decodeJson(body: Buffer): CollectedSpan[] {
  const data = JSON.parse(body.toString('utf8')) as JsonTraces;
  const out: CollectedSpan[] = [];
  for (const rs of data.resourceSpans ?? []) {
    const resource = jsonAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          name: s.name,
          kind: s.kind,
          attributes: jsonAttributes(s.attributes),
          statusCode: s.status?.code ?? 0,
          resource,
        });
      }
    }
  }
  return out;
}

// ── OTLP/protobuf: just enough of the wire format for ExportTraceServiceRequest ──

type Field = { no: number; wire: number; varint?: bigint; bytes?: Buffer };

function* fields(buf: Buffer): Generator<Field> {
  let i = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[i++] as number;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const tag = Number(varint());
    const no = tag >>> 3;
    const wire = tag & 7;
    if (wire === 0) yield { no, wire, varint: varint() };
    else if (wire === 1) {
      yield { no, wire, bytes: buf.subarray(i, i + 8) };
      i += 8;
    } else if (wire === 5) {
      yield { no, wire, bytes: buf.subarray(i, i + 4) };
      i += 4;
    } else if (wire === 2) {
      const len = Number(varint());
      yield { no, wire, bytes: buf.subarray(i, i + len) };
      i += len;
    } else throw new Error(`unsupported protobuf wire type ${wire}`);
  }
}

function protoAnyValue(buf: Buffer): string | number | boolean | undefined {
  for (const f of fields(buf)) {
    if (f.no === 1 && f.bytes) return f.bytes.toString('utf8');
    if (f.no === 2 && f.varint !== undefined) return f.varint !== 0n;
    if (f.no === 3 && f.varint !== undefined) return Number(BigInt.asIntN(64, f.varint));
    if (f.no === 4 && f.bytes) return f.bytes.readDoubleLE(0);
  }
  return undefined;
}

function protoKeyValue(buf: Buffer, into: Record<string, string | number | boolean>): void {
  let key = '';
  let value: string | number | boolean | undefined;
  for (const f of fields(buf)) {
    if (f.no === 1 && f.bytes) key = f.bytes.toString('utf8');
    if (f.no === 2 && f.bytes) value = protoAnyValue(f.bytes);
  }
  if (value !== undefined) into[key] = value;
}

function protoSpan(buf: Buffer, resource: CollectedSpan['resource']): CollectedSpan {
  const s: CollectedSpan = { traceId: '', spanId: '', parentSpanId: '', name: '', kind: 0, attributes: {}, statusCode: 0, resource };
  for (const f of fields(buf)) {
    if (f.no === 1 && f.bytes) s.traceId = f.bytes.toString('hex');
    else if (f.no === 2 && f.bytes) s.spanId = f.bytes.toString('hex');
    else if (f.no === 4 && f.bytes) s.parentSpanId = f.bytes.toString('hex');
    else if (f.no === 5 && f.bytes) s.name = f.bytes.toString('utf8');
    else if (f.no === 6 && f.varint !== undefined) s.kind = Number(f.varint);
    else if (f.no === 9 && f.bytes) protoKeyValue(f.bytes, s.attributes);
    else if (f.no === 15 && f.bytes) {
      for (const g of fields(f.bytes)) if (g.no === 3 && g.varint !== undefined) s.statusCode = Number(g.varint);
    }
  }
  return s;
}

function decodeProtobuf(body: Buffer): CollectedSpan[] {
  const out: CollectedSpan[] = [];
  for (const rs of fields(body)) {
    if (rs.no !== 1 || !rs.bytes) continue;
    const resource: CollectedSpan['resource'] = {};
    const scopes: Buffer[] = [];
    for (const f of fields(rs.bytes)) {
      if (f.no === 1 && f.bytes)
        for (const a of fields(f.bytes)) {
          if (a.no === 1 && a.bytes) protoKeyValue(a.bytes, resource);
        }
      if (f.no === 2 && f.bytes) scopes.push(f.bytes);
    }
    for (const scope of scopes) for (const f of fields(scope)) if (f.no === 2 && f.bytes) out.push(protoSpan(f.bytes, resource));
  }
  return out;
}
