// Layer rules of src/, checked by `npm run lint:layers` (part of `npm run lint`
// and of `npm test`). Every folder of src/ has a layer below and a list of the
// layers it may import; an import of anything else in src/ fails the check.
//
//   cli ─> runtime ─> tools (admin, metrics, history, rerun; replay for cli; doctor's checks are in cli/)
//                       │            metrics, history, telemetry ──> lifecycle <── worker, receiver, queue (pump)
//                       ├─> receiver ──> queue <── worker ──> api
//                       │                            └──> handler kit ──> api
//                       └─> sources (poll, schedule, reconcile) ──> worker, queue, api
//   everything ──> config, log, pii ──> events ──> spec ──> util   (the bottom)
//   sandbox ──> spec, util only
// Every layer rule is by folder (the one file named: index.ts, the package entry).
// Besides the layers, the surface rules (surfaceRules below): an import from another
// folder names that folder's index.ts, never a file inside it.
// docs/architecture.md ("Layers") describes the same rows.
//
// Type-only imports count like any other import (tsPreCompilationDeps).

/** Path patterns of each layer (relative to the repository root). */
const L = {
  cli: '^src/cli/',
  runtime: '^src/runtime/',
  // The webhook route, body limits, health; capture (recording deliveries) and the disk spool (buffer while Redis is down).
  receiver: '^src/receiver/',
  // The queue board and the deliveries view runtime mounts on the receiver's app.
  admin: '^src/admin/',
  queue: '^src/queue/',
  worker: '^src/worker/',
  // The handler kit: defineHandler/defineSchedule, options, settings, loading handler modules, hot reload, handler env.
  handlerKit: '^src/handler/',
  // Ready-made settings helpers for handlers (business hours).
  recipes: '^src/recipes/',
  // Every source of work besides the webhook: polls (derived events), reconcile, schedules.
  sources: '^src/sources/',
  api: '^src/api/',
  // The API clients Switchyard builds for itself (worker runs, schedules, polls, reconcile, replay --inline, doctor):
  // one builder on the shared limiter, the catch-up budget, the read cache.
  clients: '^src/clients/',
  sandbox: '^src/sandbox/',
  // The lifecycle streams: the worker's typed events (received, fanned out, attempt started/ended, API call,
  // step, wait) and the ingest path's (received, storing, stored, answered, drained, pumping, pumped), and the
  // buses the worker, the receiver and the pump emit them on; metrics, history, telemetry and capture subscribe.
  lifecycle: '^src/lifecycle/',
  // Prometheus metrics: subscribers of both lifecycle streams, and the queue state read on scrape; wired by runtime.
  metrics: '^src/metrics/',
  // Delivery history: a subscriber of the worker's lifecycle stream (and the receiver's repeats), wired by runtime; read by the CLI and admin.
  history: '^src/history/',
  // CLI services: what `switchyard replay` runs (doctor's checks live in cli/).
  replay: '^src/replay/',
  // `switchyard rerun`'s engine: plans from the history, durable batches, the workers' feeder; the CLI, admin and runtime use it.
  rerun: '^src/rerun/',
  // `switchyard/testing`: helpers for handler authors' tests.
  testing: '^src/testing/',
  // `switchyard`: the public handler kit entry.
  index: '^src/index\\.ts$',
  events: '^src/events/',
  spec: '^src/spec/',
  redis: '^src/redis/',
  // Process-wide basics: configuration (OTEL_* included), logger, personal data (what it is, how it is masked).
  shared: '^src/(config|log|pii)/',
  // OpenTelemetry: start-up (the SDK imported only when on), the spans of the data path as lifecycle subscribers.
  telemetry: '^src/telemetry/',
  util: '^src/util/',
};

const bottom = [L.events, L.spec, L.util];

/**
 * What each layer may import inside src/ (besides itself). Anything in src/
 * not listed is forbidden for that layer.
 */
const allowed = {
  util: [],
  spec: [L.util],
  events: [L.spec, L.util],
  // Plain data and a bus: imports only the bottom (it names no worker, runtime or observer module).
  lifecycle: [...bottom],
  // pii/redact.ts knows which fields of each event are personal (the catalogue).
  shared: [L.shared, L.events, L.spec, L.util],
  // Its settings come from config; the receiver, the pump and the worker reach it through their lifecycle streams only.
  telemetry: [L.lifecycle, L.shared, L.util],
  redis: [L.shared, L.util],
  // The client stands alone: spec and util only (its Redis limiter loads its Lua with util/lua.ts).
  api: [L.spec, L.util],
  clients: [L.api, L.redis, L.shared, ...bottom],
  // The simulator has its own vocabulary, on the upstream's spec only.
  sandbox: [L.spec, L.util],
  // lifecycle: the pump emits on the ingest stream.
  queue: [L.lifecycle, ...bottom, L.redis, L.shared],
  receiver: [L.lifecycle, L.queue, ...bottom, L.redis, L.shared],
  // admin reads the delivery history for its deliveries view (history imports no admin module), and starts reruns.
  admin: [L.receiver, L.queue, ...bottom, L.redis, L.shared, L.history, L.rerun],
  // workflow.ts names the recipes' BusinessHours type (ctx.sleep's businessHours option).
  handlerKit: [L.api, L.recipes, ...bottom, L.shared],
  recipes: [L.handlerKit, ...bottom],
  // recipes: a business-hours sleep's due time (addBusinessTime).
  worker: [L.lifecycle, L.queue, L.api, L.handlerKit, L.recipes, ...bottom, L.redis, L.shared],
  sources: [L.lifecycle, L.clients, L.worker, L.queue, L.api, L.handlerKit, ...bottom, L.redis, L.shared],
  metrics: [L.lifecycle, L.queue, ...bottom, L.redis, L.shared],
  // No worker or runtime module: what the worker does reaches it as lifecycle events.
  history: [L.lifecycle, L.queue, L.handlerKit, ...bottom, L.redis, L.shared],
  replay: [L.clients, L.worker, L.queue, L.api, L.handlerKit, ...bottom, L.redis, L.shared],
  // Reads the history (plans, a run's steps), adds handler jobs; no worker or runtime module.
  rerun: [L.history, L.queue, L.handlerKit, ...bottom, L.redis, L.shared],
  // sources: testSchedule runs a schedule as the worker does (its job and its handler adapter).
  testing: [L.replay, L.sandbox, L.sources, L.worker, L.api, L.queue, L.handlerKit, L.recipes, ...bottom, L.shared],
  index: [L.handlerKit, L.recipes, L.api, ...bottom],
};

/**
 * Surfaces (docs/architecture.md, "Surfaces"). Every top-level folder of src/ shows
 * the rest of src/ one file, its index.ts: an import from another folder names that
 * file, never one inside the folder; imports inside a folder are direct, and a
 * folder never imports its own index.ts. The rule is per top-level folder: its
 * sub-folders (queue/lua, queue/waits, api/resources, sources/poll, sandbox/routes, …)
 * are part of it and show nothing of their own, with one exception, SUB_AREAS.
 * Where a folder's index.ts is a package entry (sandbox: `switchyard/sandbox`,
 * testing: `switchyard/testing`), what the rest of src/ takes beyond the public names
 * goes through its internal.ts, so the public entry never grows internal names.
 */
const SURFACE = '^src/[^/]+/index\\.ts$';
const INTERNAL_SURFACE = '^src/(sandbox|testing)/internal\\.ts$';
// spec/schemas, the resource schemas (the client's reading of the answers' shapes), is
// an area of its own with its own index.ts: the sandbox may use spec/index.ts (the
// vocabulary), never the schemas, so spec/index.ts must not carry them.
const SUB_AREAS = { specSchemas: '^src/spec/schemas/' };
// The package entries (package.json "exports") and the public-*.ts files that
// switchyard/api is made of: src/index.ts re-exports `export * from './api/public-errors.js'`,
// so a new error class reaches `switchyard` and `switchyard/api` alike.
const ENTRIES = '^src/(index|api/public|sandbox/index|testing/index)\\.ts$';
const PUBLIC_PARTS = '^src/api/public[\\w-]*\\.ts$';
const MSG =
  "import it from the folder's index.ts (internal.ts for sandbox and testing), adding the name to that file's exports if it is missing";

const surfaceRules = [
  {
    name: 'surface-only',
    severity: 'error',
    comment: `An import from another folder of src/ reaches into one of its files: ${MSG}.`,
    from: { path: '^src/([^/]+)/', pathNot: ENTRIES },
    to: { path: '^src/', pathNot: ['^src/$1/', SURFACE, INTERNAL_SURFACE, `${SUB_AREAS.specSchemas}index\\.ts$`] },
  },
  {
    name: 'surface-only-entries',
    severity: 'error',
    comment: `A package entry reaches into another folder's file: ${MSG}; or take it from that folder's public entry (src/api/public*.ts).`,
    from: { path: '^src/(?:(api|sandbox|testing)/)?(?:index|public)\\.ts$', pathNot: '^src/api/index\\.ts$' },
    to: { path: '^src/', pathNot: ['^src/$1/', SURFACE, INTERNAL_SURFACE, `${SUB_AREAS.specSchemas}index\\.ts$`, PUBLIC_PARTS] },
  },
  {
    name: 'surface-only-into-sub-area',
    severity: 'error',
    comment: 'spec/schemas is an area of its own: from outside it, import src/spec/schemas/index.ts.',
    from: { path: '^src/', pathNot: SUB_AREAS.specSchemas },
    to: { path: SUB_AREAS.specSchemas, pathNot: `${SUB_AREAS.specSchemas}index\\.ts$` },
  },
  {
    name: 'surface-only-out-of-sub-area',
    severity: 'error',
    comment: 'spec/schemas is an area of its own: what it takes from the rest of spec/ comes from src/spec/index.ts.',
    from: { path: SUB_AREAS.specSchemas },
    to: { path: '^src/spec/', pathNot: [SUB_AREAS.specSchemas, '^src/spec/index\\.ts$'] },
  },
  {
    name: 'no-own-surface',
    severity: 'error',
    comment: "A module imports its own folder's index.ts: import the file that declares the name (the index is for other folders).",
    from: { path: '^src/([^/]+)/', pathNot: [SURFACE, INTERNAL_SURFACE, SUB_AREAS.specSchemas] },
    to: { path: '^src/$1/(index|internal)\\.ts$' },
  },
];

const layerRules = Object.entries(allowed).map(([layer, may]) => ({
  name: `layer-${layer}`,
  severity: 'error',
  comment: `${layer} (${L[layer]}) may import only: ${may.length ? may.join(', ') : 'nothing of ours'}`,
  from: { path: L[layer] },
  to: { path: '^src/', pathNot: [L[layer], ...may] },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Circular dependency: break it by moving the shared part down a layer.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve to a file or a package.',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-entry-layer-imports',
      severity: 'error',
      comment: 'src/cli and src/runtime are the top: only src/cli (and bin/) may import them, ' + 'and runtime must not import cli.',
      from: { path: '^src/', pathNot: [L.cli, L.runtime] },
      to: { path: [L.cli, L.runtime] },
    },
    {
      name: 'runtime-not-to-cli',
      severity: 'error',
      comment: 'runtime is process wiring used by the CLI; it must not import the CLI.',
      from: { path: L.runtime },
      to: { path: L.cli },
    },
    {
      name: 'runtime-not-to-entries',
      severity: 'error',
      comment: 'runtime wires the service; the sandbox, test kit, CLI services and public entry are not part of it.',
      from: { path: L.runtime },
      to: { path: [L.sandbox, L.testing, L.replay, L.index] },
    },
    {
      name: 'layer-unplaced',
      severity: 'error',
      comment: 'A module of src/ in no layer: add its folder to .dependency-cruiser.cjs.',
      from: { path: '^src/', pathNot: Object.values(L) },
      to: { path: '^src/' },
    },
    {
      name: 'spec-npm-only-zod',
      severity: 'error',
      comment: 'spec/ is the vocabulary: zod schemas and constants; of packages it imports zod only.',
      from: { path: L.spec },
      to: { dependencyTypes: ['npm'], pathNot: '(^|/)node_modules/zod/' },
    },
    {
      name: 'src-not-to-dev-dep',
      severity: 'error',
      comment: 'src/ ships in the package: it must not import a devDependency.',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    ...surfaceRules,
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
