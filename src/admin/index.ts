export { mountAdmin, type AdminCredentials, type AdminOptions } from './mount.js';
export { type HistorySource } from './deliveries.js';
export { escapeHtml } from './page.js';
