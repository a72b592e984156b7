/**
 * Whether and where spans are exported, from the standard OpenTelemetry
 * variables. Read by src/config/config.ts with everything else (the rest of the code
 * receives `Config.tracing`). Imports nothing, so the configuration layer may
 * use it.
 */

/** The OTLP encodings bundled with Switchyard; `grpc` is not. */
export const TRACING_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type TracingProtocol = (typeof TRACING_PROTOCOLS)[number];

/** Tracing settings; present only when tracing is on. */
export interface TracingSettings {
  /** Full URL spans are POSTed to (`…/v1/traces`). */
  readonly url: string;
  readonly protocol: TracingProtocol;
  /** Extra request headers for the collector (OTEL_EXPORTER_OTLP_HEADERS); never logged. */
  readonly headers: Readonly<Record<string, string>>;
  /** Longest one export may take (ms). */
  readonly timeoutMs: number;
  /** `service.name` of the resource. */
  readonly serviceName: string;
}

type Env = Readonly<Record<string, string | undefined>>;
type Problems = { variable: string; problem: string }[];

const value = (env: Env, name: string): string | undefined => {
  const v = env[name]?.trim();
  return v ? v : undefined;
};

/** The signal-specific variable (`OTEL_EXPORTER_OTLP_TRACES_X`) wins over the general one (`OTEL_EXPORTER_OTLP_X`). */
function pick(env: Env, suffix: string): { variable: string; value: string } | undefined {
  for (const variable of [`OTEL_EXPORTER_OTLP_TRACES_${suffix}`, `OTEL_EXPORTER_OTLP_${suffix}`]) {
    const v = value(env, variable);
    if (v !== undefined) return { variable, value: v };
  }
  return undefined;
}

/** `k1=v1,k2=v2` with URL-encoded values (the OTLP exporter specification). */
function parseHeaders(text: string): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const part of text.split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    if (eq <= 0) return undefined;
    try {
      out[decodeURIComponent(part.slice(0, eq).trim())] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      return undefined;
    }
  }
  return out;
}

/**
 * Tracing is on when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
 * OTEL_EXPORTER_OTLP_ENDPOINT is set, unless OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none. The traces endpoint is used as given; the general
 * one gets `/v1/traces` appended. An unsupported protocol is a problem
 * whenever it is set (never silently ignored); values are never echoed for
 * headers (they may hold a collector's key).
 */
export function tracingSettings(env: Env, problems: Problems): TracingSettings | undefined {
  const protocol = pick(env, 'PROTOCOL');
  if (protocol && !(TRACING_PROTOCOLS as readonly string[]).includes(protocol.value)) {
    problems.push({
      variable: protocol.variable,
      problem: `unsupported OTLP protocol "${protocol.value}"; accepted values: ${TRACING_PROTOCOLS.join(', ')} (grpc is not bundled)`,
    });
  }
  const disabled =
    value(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true' || value(env, 'OTEL_TRACES_EXPORTER')?.toLowerCase() === 'none';
  const traces = value(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const general = value(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (disabled || (traces === undefined && general === undefined)) return undefined;
  const variable = traces !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  const url = traces ?? `${(general as string).replace(/\/+$/, '')}/v1/traces`;
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    problems.push({ variable, problem: 'expected an http:// or https:// URL of an OTLP/HTTP collector (e.g. http://localhost:4318)' });
  }
  const headerVar = pick(env, 'HEADERS');
  const headers = headerVar ? parseHeaders(headerVar.value) : {};
  if (!headers)
    problems.push({
      variable: headerVar?.variable ?? 'OTEL_EXPORTER_OTLP_HEADERS',
      problem: 'expected key=value pairs separated by commas (values URL-encoded)',
    });
  const timeoutVar = pick(env, 'TIMEOUT');
  const timeoutMs = timeoutVar ? Number(timeoutVar.value) : 10_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0)
    problems.push({
      variable: timeoutVar?.variable ?? 'OTEL_EXPORTER_OTLP_TIMEOUT',
      problem: 'expected a positive whole number of milliseconds',
    });
  return {
    url,
    protocol: (protocol?.value ?? 'http/protobuf') as TracingProtocol,
    headers: headers ?? {},
    timeoutMs,
    serviceName: value(env, 'OTEL_SERVICE_NAME') ?? 'switchyard',
  };
}
