export { mountAdmin, type AdminCredentials, type AdminOptions } from './mount.js';
export { escapeHtml, type HistorySource } from './deliveries.js';
