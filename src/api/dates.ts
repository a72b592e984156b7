/** The client's dates and timestamps: the one strict reading it shares with the CLI (src/util/dates.ts). */
export { DATE_FORM, DATE_OR_TIMESTAMP_FORM, TIMESTAMP_FORM, dateOrTimestampProblem, dateProblem, timestampProblem } from '../util/index.js';
