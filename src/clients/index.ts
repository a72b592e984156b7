/** The surface of src/clients/ for the rest of src/ (docs/architecture.md, "Surfaces"). @module */
export { apiClients, configuredApiClients, type ApiCall } from './api-clients.js';
export { reconcileBurst, rerunBurst } from './budget.js';
export { SLOT_YIELD_AFTER_MS, type PausableSlot } from './slot-yield.js';
