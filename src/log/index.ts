/** The surface of src/log/ for the rest of src/ (docs/architecture.md, "Surfaces"). @module */
export { createLogger, redactText, type Logger } from './logger.js';
