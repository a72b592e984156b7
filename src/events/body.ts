import { isUtf8 } from 'node:buffer';

/**
 * How raw bodies are kept losslessly wherever they are stored (the queued
 * delivery, fixture files): as text when the bytes are valid UTF-8, else as
 * base64. Pass `text` when the caller already decoded the bytes.
 */
export function textOrBase64(bytes: Uint8Array, text?: string): { text: string } | { base64: string } {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return isUtf8(buf) ? { text: text ?? buf.toString('utf8') } : { base64: buf.toString('base64') };
}

/** The exact bytes back from either form. */
export function bytesOf(text: string | undefined, base64: string | undefined): Buffer {
  return base64 !== undefined ? Buffer.from(base64, 'base64') : Buffer.from(text ?? '', 'utf8');
}
