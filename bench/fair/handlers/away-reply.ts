// bench/fair: the shipped away-reply recipe (priority high; outside business hours 1 read + 1 send): workspace B's live traffic.
export { default } from '../../../handlers/away-reply.js';
