/**
 * The surface of src/sandbox/ for the rest of src/ (docs/architecture.md, "Surfaces"). Not public:
 * the package's `sandbox` entry is ./index.ts, which this file never widens.
 * @module
 */
export { KeptStateError } from './keeper.js';
export { API_BASE } from './paths.js';
export { SeedExtras } from './seed/index.js';
export { defaultWorkspaceKey, MAX_SANDBOX_WORKSPACES } from './workspace-options.js';
