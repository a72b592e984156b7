/** Why a body could not be read in full. */
export type BodyFailure = 'too_large' | 'timeout' | 'aborted';

export type BodyResult = { ok: true; bytes: Uint8Array } | { ok: false; reason: BodyFailure };

/**
 * Reads a request body, never holding more than `maxBytes` of it: a declared
 * Content-Length over the limit is refused before reading, and a chunked body
 * is cut off as soon as it passes the limit. A body that does not finish
 * within `timeoutMs` (slowloris) is cut off too.
 */
export async function readBody(
  stream: ReadableStream<Uint8Array> | null,
  contentLength: string | undefined,
  maxBytes: number,
  timeoutMs: number,
): Promise<BodyResult> {
  if (contentLength !== undefined && /^\d+$/.test(contentLength) && Number(contentLength) > maxBytes) {
    await stream?.cancel().catch(() => undefined);
    return { ok: false, reason: 'too_large' };
  }
  if (stream === null) return { ok: true, bytes: new Uint8Array(0) };

  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((res) => { timer = setTimeout(() => res('timeout'), timeoutMs); });
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), timeout]);
      if (next === 'timeout') {
        await reader.cancel().catch(() => undefined);
        return { ok: false, reason: 'timeout' };
      }
      if (next.done) break;
      total += next.value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        return { ok: false, reason: 'too_large' };
      }
      chunks.push(next.value);
    }
  } catch {
    return { ok: false, reason: 'aborted' };
  } finally {
    clearTimeout(timer);
  }
  if (chunks.length === 1) return { ok: true, bytes: chunks[0] as Uint8Array };
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) { bytes.set(c, offset); offset += c.byteLength; }
  return { ok: true, bytes };
}
