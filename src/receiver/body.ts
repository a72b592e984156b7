import type { Readable } from 'node:stream';

/** Why a body could not be read in full. */
export type BodyFailure = 'too_large' | 'timeout' | 'aborted';

/** A declared Content-Length over the limit: refused before a byte is read. */
function declaredTooLarge(contentLength: string | undefined, maxBytes: number): boolean {
  return contentLength !== undefined && /^\d+$/.test(contentLength) && Number(contentLength) > maxBytes;
}

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
  if (declaredTooLarge(contentLength, maxBytes)) {
    await stream?.cancel().catch(() => undefined);
    return { ok: false, reason: 'too_large' };
  }
  if (stream === null) return { ok: true, bytes: new Uint8Array(0) };

  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((res) => {
    timer = setTimeout(() => res('timeout'), timeoutMs);
  });
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
  for (const c of chunks) {
    bytes.set(c, offset);
    offset += c.byteLength;
  }
  return { ok: true, bytes };
}

/**
 * The common case for small webhooks: the body came in the same packet as the
 * headers, so once the parser has run (one microtask later) all the declared
 * Content-Length bytes sit in the stream's buffer and nobody has read them.
 * They are taken at once, without listeners, a timer or a wait. Undefined
 * when that is not the case (chunked, or still arriving): then it is streamed.
 */
async function readBuffered(incoming: Readable, contentLength: string | undefined): Promise<Buffer | undefined> {
  if (contentLength === undefined || !/^\d+$/.test(contentLength)) return undefined;
  const declared = Number(contentLength);
  if (declared === 0) return undefined;
  await Promise.resolve(); // one microtask: the parser finishes the message first
  if (incoming.readableFlowing === true || incoming.readableLength !== declared) return undefined;
  // With no size, read() returns everything buffered: exactly the declared body.
  const chunk: unknown = incoming.read();
  // Let the stream run to its end once the parser finishes the message, so it
  // reads as consumed (no drain is scheduled for it after the answer).
  incoming.resume();
  return Buffer.isBuffer(chunk) ? chunk : undefined;
}

/**
 * Same contract as `readBody`, reading a Node `IncomingMessage` directly
 * (`c.env.incoming` under @hono/node-server). It avoids building an undici
 * Request and a Web ReadableStream per request, the costliest part of the
 * route. A declared Content-Length over the limit is refused before reading;
 * a chunked body is cut off as soon as it passes the limit (the stream is
 * paused and never buffered further: the 413 goes out with `Connection: close`
 * and the server discards the rest); a body that does not finish within
 * `timeoutMs` is cut off too.
 */
export async function readNodeBody(
  incoming: Readable,
  contentLength: string | undefined,
  maxBytes: number,
  timeoutMs: number,
): Promise<BodyResult> {
  if (declaredTooLarge(contentLength, maxBytes)) return { ok: false, reason: 'too_large' };
  if (incoming.readableEnded) return { ok: true, bytes: new Uint8Array(0) };
  if (incoming.destroyed) return { ok: false, reason: 'aborted' };
  const buffered = await readBuffered(incoming, contentLength);
  if (buffered) return { ok: true, bytes: buffered };
  return new Promise<BodyResult>((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const done = (result: BodyResult) => {
      clearTimeout(timer);
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
      if (!result.ok) incoming.pause();
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > maxBytes) {
        chunks.length = 0;
        done({ ok: false, reason: 'too_large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
      done({ ok: true, bytes });
    };
    const onError = () => done({ ok: false, reason: 'aborted' });
    const onClose = () => done({ ok: false, reason: 'aborted' });
    const timer = setTimeout(() => done({ ok: false, reason: 'timeout' }), timeoutMs);
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}
