/** The API spec's Limits table (and the request tables' limits), as numbers. */

/** `per_page` of listings and search: default 50, 1 to 100. */
export const PER_PAGE = { default: 50, min: 1, max: 100 } as const;

/** The burst limit (30, 60 or 100 requests by plan) is counted per token over this window. */
export const BURST_WINDOW_MS = 10_000;

/** How long the service remembers an Idempotency-Key and its first answer: 24 hours. */
export const IDEMPOTENCY_MEMORY_MS = 24 * 3_600_000;

/** Most characters a text field may hold on write. */
export const MAX_CHARS = {
  contactName: 255,
  contactPhone: 32,
  dealName: 255,
  closedLostReason: 255,
  /** Text of a text message, and the prompt of a buttons message. */
  messageText: 4096,
  noteBody: 4096,
  replyTo: 255,
  attachmentUrl: 2048,
  caption: 1024,
  fileName: 255,
  templateName: 255,
  /** Each button's label. */
  button: 100,
  conversationSummary: 2000,
  orderExternalId: 191,
} as const;

/** Buttons per message: 1 to 10, all unique. */
export const BUTTONS = { min: 1, max: 10 } as const;

/**
 * Money in requests (JSON numbers; answered as two-decimal strings). The spec
 * gives `min 0` and no maximum; ours is 9 999 999 999 999.99, the largest
 * amount whose every cent a JSON number (a double: 15 significant digits)
 * still carries exactly. A larger one is refused (422), never stored garbled.
 */
export const MONEY = { max: 9_999_999_999_999.99, maxText: '9999999999999.99' } as const;
