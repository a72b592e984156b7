export { mountAdmin, type AdminCredentials, type AdminOptions } from './mount.js';
