/** The surface of src/pii/ for the rest of src/ (docs/architecture.md, "Surfaces"). @module */
export { EMAIL_FIELDS, PHONE_FIELDS, maskPersonalText } from './mask.js';
export { createRedactor, type Redactor } from './redact.js';
