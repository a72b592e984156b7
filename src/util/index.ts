/** The surface of src/util/ for the rest of src/ (docs/architecture.md, "Surfaces"). @module */
export { closest } from './closest.js';
export { DATE_FORM, DATE_OR_TIMESTAMP_FORM, TIMESTAMP_FORM, dateOrTimestampProblem, dateProblem, timestampProblem } from './dates.js';
export { isLoopbackHost } from './loopback.js';
export { LuaScripts, type LuaArg } from './lua.js';
export { printable, printableLines } from './printable.js';
export { PRIORITIES, type Priority } from './priority.js';
export { sleep } from './sleep.js';
export { durationOption, formatDuration, parseDuration, parseSince, parseSize, readSince } from './units.js';
export { FairPool, type Lease, type PoolOwner } from './fair-pool.js';
export { SlotHold } from './slot-hold.js';
