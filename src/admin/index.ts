export { mountAdmin, type AdminCredentials, type AdminOptions } from './mount.js';
export { type HistorySource } from './page.js';
export { type AdminRerun } from './rerun.js';
export { escapeHtml } from './page.js';
export { type WaitOps } from './waits-actions.js';
