import { randomBytes } from 'node:crypto';
import { SandboxClock } from './clock.js';
import { FaultInjector } from './faults.js';
import { IdSequence } from './ids.js';
import { IdempotencyStore } from './idempotency-store.js';
import { BurstLimiter, QuotaTracker } from './rate-limit.js';
import { RequestLog } from './request-log.js';
import { buildSeed, type AddedWorkspace, type SeedExtras } from './seed/index.js';
import type { Token, Workspace } from './types.js';

/** Switches the `/_sandbox/` hooks flip at run time. */
export interface SandboxSettings {
  /** Spec, Authentication 12: after the retirement date, legacy keys answer 403 `legacy_key_retired`. */
  legacyRetired: boolean;
  /** Spec, Authentication 6 (off by default: the sandbox is plain HTTP on loopback). */
  requireTls: boolean;
}

/** Options fixed at creation that a reset keeps. */
export interface StateOptions {
  clock: SandboxClock;
  /** Requests per 10 s per token of every workspace without a burst of its own. */
  burst: number;
  /** The burst of some workspaces (their plan), in workspace order: the two seeded, then the added ones. */
  bursts?: readonly (number | undefined)[];
  fullToken?: string;
  otherToken?: string;
  /** Workspaces made after the two seeded ones. */
  added?: readonly AddedWorkspace[];
  extras?: SeedExtras;
  random?: () => number;
  requireTls?: boolean;
}

/**
 * The whole mutable world of one sandbox: seeded workspaces and tokens, plus
 * the machinery state (idempotency memory, rate windows, request log, faults).
 * `reset()` rebuilds it from the seed with the same token values.
 */
export class SandboxState {
  readonly clock: SandboxClock;
  /** This sandbox's lifetime id, made when it starts fresh (a kept sandbox keeps its own; a reset keeps it too). */
  generation = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
  ids = new IdSequence();
  workspaces = new Map<number, Workspace>();
  tokens: Token[] = [];
  readonly idempotency = new IdempotencyStore();
  readonly burst: BurstLimiter;
  /** Workspace id -> its own burst (plan), where it differs from `burst.burst`. */
  readonly workspaceBursts = new Map<number, number>();
  readonly quota = new QuotaTracker();
  readonly log = new RequestLog();
  readonly faults: FaultInjector;
  readonly settings: SandboxSettings;

  constructor(private readonly options: StateOptions) {
    this.clock = options.clock;
    this.burst = new BurstLimiter(options.burst);
    this.faults = new FaultInjector(options.random);
    this.settings = { legacyRetired: false, requireTls: options.requireTls ?? false };
    this.reset();
    [...this.workspaces.keys()].forEach((id, i) => {
      const own = options.bursts?.[i];
      if (own !== undefined) this.workspaceBursts.set(id, own);
    });
  }

  /** Requests per 10 s per token of a workspace (spec: by plan, counted per token). */
  burstOf(workspaceId: number | undefined): number {
    return (workspaceId !== undefined ? this.workspaceBursts.get(workspaceId) : undefined) ?? this.burst.burst;
  }

  now(): number {
    return this.clock.now();
  }

  /** Rebuilds the seed and forgets every request, key, window, quota and fault. */
  reset(extras: SeedExtras | undefined = this.options.extras): void {
    this.ids = new IdSequence();
    const seeded = buildSeed(this.ids, this.now(), {
      ...(this.options.fullToken ? { fullToken: this.options.fullToken } : {}),
      ...(this.options.otherToken ? { otherToken: this.options.otherToken } : {}),
      ...(this.options.added ? { added: this.options.added } : {}),
      ...(extras ? { extras } : {}),
    });
    this.workspaces = seeded.workspaces;
    this.tokens = seeded.tokens;
    this.idempotency.clear();
    this.burst.clear();
    this.quota.clear();
    this.log.clear();
    this.faults.clear();
    this.settings.legacyRetired = false;
  }

  /** The workspace a token is bound to. */
  workspace(id: number): Workspace {
    const ws = this.workspaces.get(id);
    if (!ws) throw new Error(`unknown workspace ${id}`);
    return ws;
  }

  /** The workspace a hook names by id (a number, or digits) or key (`acme`, `other`, …); undefined when none is. */
  findWorkspace(ref: number | string): Workspace | undefined {
    if (typeof ref === 'number' || /^\d+$/.test(ref)) return this.workspaces.get(Number(ref));
    return [...this.workspaces.values()].find((ws) => ws.key === ref);
  }

  /** The first (Acme) workspace, where hooks act by default. */
  firstWorkspace(): Workspace {
    const first = this.workspaces.values().next().value;
    if (!first) throw new Error('no workspace');
    return first;
  }
}
