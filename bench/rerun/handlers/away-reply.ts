// bench/rerun: the shipped away-reply recipe (priority high, 2 calls when closed): the live traffic.
export { default } from '../../../handlers/away-reply.js';
