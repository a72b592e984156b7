/** `switchyard reconcile` and scheduled reconcile: what changed upstream → the events it implies → deliveries for those not received. */
export { RECONCILE_CALL, reconcileClient } from './client.js';
export { inferContact, inferConversation, inferLead, inferMessage, type Inferred, type Window } from './infer.js';
export { formatReport, reconcile, type EventCounts, type ReconcileOptions, type ReconcileReport } from './run.js';
export { RECONCILE_SCHEDULER_ID, reconcileTimer, type ReconcileTimerDeps } from './reconcile-timer.js';
export { reconcileDeliveryKey, synthesize } from './synthesize.js';
export { inferChanges, type ReconcileApi } from './walk.js';
