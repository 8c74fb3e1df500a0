// The cached traffic answer per backend (a target, and each of its hops): recomputed when the watchdog steps a
// target (every signal and the 1 s tick), read by GET /ready, the agent-check port and the drainers. A read never
// waits for a probe, and costs a map lookup, so load balancers may poll it every second from many places.
import type { TargetMemory } from '../../core/memory.js';
import type { PoolConfig, ReadinessConfig } from '../../config/traffic-schema.js';
import { memberKey } from '../../config/traffic-schema.js';
import type { TrafficMetrics } from '../../metrics.js';
import { placeMembers } from './pools.js';
import { readinessOf, type Readiness, type ReadinessRules } from './readiness.js';

export interface TrafficAnswer extends Readiness {
  /** "target" or "target/endpoint". */
  backend: string;
  /** What load balancers are told: ready, or held in by the pool rule. */
  inRotation: boolean;
  /** Not ready, kept in rotation so the pool keeps its minimum (the status page says so). */
  held: boolean;
  pool?: string;
  /** Unix ms `inRotation` last changed (when the view first answered, if it never has). */
  changedAt: number;
}

export interface TrafficTarget {
  name: string;
  endpoints: string[];
  wedgeAfter: number;
  downAfter: number;
}

/** What a reload hands to the next view: each answer and since when it stands, and the pool of each backend. */
export interface TrafficCarry {
  changedAt: Map<string, { inRotation: boolean; at: number }>;
  backends: Map<string, string | undefined>;
}

export interface TrafficViewOptions {
  targets: TrafficTarget[];
  readiness: ReadinessConfig;
  pools: PoolConfig[];
  metrics?: Pick<TrafficMetrics, 'backendInRotation' | 'backendHeld'>;
  now?: () => number;
  previous?: TrafficCarry;
}

type Listener = (a: TrafficAnswer) => void;

export class TrafficView {
  private readonly now: () => number;
  private readonly rules = new Map<string, ReadinessRules>();
  private readonly readiness = new Map<string, Readiness>();
  private readonly answers = new Map<string, TrafficAnswer>();
  private readonly poolOf = new Map<string, PoolConfig>();
  private readonly changed: Map<string, { inRotation: boolean; at: number }>;
  private readonly listeners = new Map<string, Set<Listener>>();

  constructor(private readonly opts: TrafficViewOptions) {
    this.now = opts.now ?? Date.now;
    this.changed = new Map(opts.previous?.changedAt);
    for (const t of opts.targets)
      this.rules.set(t.name, {
        ready: opts.readiness.ready,
        wedgeAfter: t.wedgeAfter,
        downAfter: t.downAfter,
      });
    for (const p of opts.pools)
      for (const m of p.members) this.poolOf.set(memberKey(m.target, m.endpoint), p);
    // A backend a reload removed (or moved to another pool) must not keep its last series.
    const now = new Map(this.keys().map((k) => [k, this.poolOf.get(k)?.name]));
    for (const [k, pool] of opts.previous?.backends ?? []) {
      if (now.has(k) && now.get(k) === pool) continue;
      const labels = { backend: k, pool: pool ?? '' };
      opts.metrics?.backendInRotation.remove(labels);
      opts.metrics?.backendHeld.remove(labels);
    }
  }

  /** Every backend the config names: each target and each of its hops. */
  keys(): string[] {
    return this.opts.targets.flatMap((t) => [t.name, ...t.endpoints.map((e) => memberKey(t.name, e))]);
  }

  /** The watchdog stepped `m` (its memory is changed in place later: everything needed is read now). */
  update(m: TargetMemory): void {
    const rules = this.rules.get(m.target);
    const target = this.opts.targets.find((t) => t.name === m.target);
    if (rules === undefined || target === undefined) return;
    const keys = [m.target, ...target.endpoints.map((e) => memberKey(m.target, e))];
    this.readiness.set(m.target, readinessOf(m, rules));
    for (const e of target.endpoints) this.readiness.set(memberKey(m.target, e), readinessOf(m, rules, e));
    const pools = new Set(keys.flatMap((k) => this.poolOf.get(k) ?? []));
    // Every member of a touched pool is placed again: one member's recovery can release another's hold.
    const touched = new Set([
      ...keys,
      ...[...pools].flatMap((p) => p.members.map((x) => memberKey(x.target, x.endpoint))),
    ]);
    const placed = new Map<string, { inRotation: boolean; held: boolean }>();
    // Before a first answer (start-up, a reload), the carried state says what was in rotation.
    const inBefore = new Set(
      [...touched].filter(
        (k) => (this.answers.get(k)?.inRotation ?? this.changed.get(k)?.inRotation) !== false,
      ),
    );
    for (const p of pools) {
      const members = p.members.flatMap((x) => {
        const key = memberKey(x.target, x.endpoint);
        const readiness = this.readiness.get(key);
        return readiness === undefined ? [] : [{ key, readiness }];
      });
      for (const [k, v] of placeMembers(members, p.minInRotation, inBefore)) placed.set(k, v);
    }
    for (const key of touched) {
      const r = this.readiness.get(key);
      if (r === undefined) continue;
      const place = placed.get(key) ?? { inRotation: r.ready, held: false };
      this.set(key, r, place.inRotation, place.held);
    }
  }

  private set(backend: string, r: Readiness, inRotation: boolean, held: boolean): void {
    const prev = this.answers.get(backend);
    const was = this.changed.get(backend);
    const at = was === undefined || was.inRotation !== inRotation ? this.now() : was.at;
    this.changed.set(backend, { inRotation, at });
    const pool = this.poolOf.get(backend)?.name;
    const a: TrafficAnswer = {
      ...r,
      backend,
      inRotation,
      held,
      ...(pool !== undefined ? { pool } : {}),
      changedAt: at,
    };
    this.answers.set(backend, a);
    if (prev?.inRotation !== inRotation || prev.held !== held) {
      const labels = { backend, pool: pool ?? '' };
      this.opts.metrics?.backendInRotation.set(labels, inRotation ? 1 : 0);
      this.opts.metrics?.backendHeld.set(labels, held ? 1 : 0);
    }
    for (const fn of this.listeners.get(backend) ?? []) fn(a);
  }

  /** The cached answer; undefined for a backend the config does not name or not stepped yet. */
  get(target: string, endpoint?: string): TrafficAnswer | undefined {
    return this.answers.get(memberKey(target, endpoint));
  }

  /** Whether the config names this backend (a 404 otherwise). */
  has(target: string, endpoint?: string): boolean {
    const t = this.opts.targets.find((x) => x.name === target);
    return t !== undefined && (endpoint === undefined || t.endpoints.includes(endpoint));
  }

  /** Calls `fn` with the backend's answer after every step of its target (or a pool peer's); returns the unsubscribe. */
  subscribe(backend: string, fn: Listener): () => void {
    let set = this.listeners.get(backend);
    if (set === undefined) this.listeners.set(backend, (set = new Set()));
    set.add(fn);
    return () => set.delete(fn);
  }

  /** Every answer, for the status page. */
  all(): TrafficAnswer[] {
    return [...this.answers.values()];
  }

  carry(): TrafficCarry {
    return {
      changedAt: new Map(this.changed),
      backends: new Map(this.keys().map((k) => [k, this.poolOf.get(k)?.name])),
    };
  }
}
