export { DiskSpool, SpoolFullError } from './spool.js';
export { SpoolDrainer } from './drainer.js';
export { spoolingSink } from './sink.js';
