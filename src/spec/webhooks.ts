/**
 * Webhook signing (spec, Events rule 3): each delivery carries this header,
 * whose value is `sha256=` followed by the hex HMAC-SHA256 of the raw
 * body keyed with the endpoint's secret. The spec uses a neutral name for the
 * header; the real one carries the service's brand (hence SIGNATURE_HEADER is
 * configurable on the receiving side).
 */
export const SIGNATURE_HEADER = 'X-Service-Signature';

/** Prefix of the signature header's value. */
export const SIGNATURE_PREFIX = 'sha256=';
