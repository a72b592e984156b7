/** The note-on-message test handler again, beside echo-note (two subscribers of one event). */
export { default } from '../notes/note-on-message.js';
