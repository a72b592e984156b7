import type { MiddlewareHandler } from 'hono';

/**
 * The admin pages request nothing from another host: bull-board's page links
 * Google Fonts (a request to a third party on every visit, and a page waiting
 * on a host an air-gapped network cannot reach). Its HTML is rewritten without
 * any `<link>` or `<script>` to an absolute http(s) URL (the board's CSS names
 * its font with fallbacks, so the system's sans-serif and monospace fonts show),
 * and every admin response carries a Content-Security-Policy that lets the
 * browser fetch from this origin only, so a later version's new link is refused
 * by the browser too.
 */
export const ADMIN_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** `<link …href="https://…">` and `<script …src="//…">`: an element that loads from another host. */
const FOREIGN = /<(link|script)\b[^>]*\b(?:href|src)\s*=\s*["']?(?:https?:)?\/\/[^>]*>(?:\s*<\/script>)?/gi;

/** `html` without the elements that load from another host. */
export function withoutForeignLoads(html: string): string {
  return html.replace(FOREIGN, '');
}

/** The policy on every admin response; HTML pages stripped of foreign loads. */
export function selfOnly(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    c.header('Content-Security-Policy', ADMIN_CSP);
    if (!c.res.headers.get('content-type')?.startsWith('text/html')) return;
    const html = await c.res.text();
    const headers = new Headers(c.res.headers);
    headers.delete('content-length');
    c.res = new Response(withoutForeignLoads(html), { status: c.res.status, statusText: c.res.statusText, headers });
  };
}
