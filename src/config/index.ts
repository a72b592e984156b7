/** The surface of src/config/ for the rest of src/ (docs/architecture.md, "Surfaces"). @module */
export { ConfigError, loadConfig, type Config } from './config.js';
export { TRACING_PROTOCOLS, tracingSettings, type TracingProtocol, type TracingSettings } from './tracing.js';
export {
  DEFAULT_WORKSPACE,
  WORKSPACE_ID,
  WorkspaceChoiceError,
  secretVariables,
  selectWorkspace,
  workspaceConfig,
  workspaceConfigs,
  workspacePrefix,
  type WorkspaceSpec,
} from './workspaces.js';
