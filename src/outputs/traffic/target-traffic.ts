// The traffic path as the runtime builds it for one config: the view every target's watchdog steps update, and a
// drainer per target with a `drain:` block, subscribed to its pool member's answer. Drain ledgers are shared
// with the runtime a reload replaces (as remediation's are), so nothing is drained or added back twice.
import type { Config } from '../../config/schema.js';
import { memberKey } from '../../config/traffic-schema.js';
import type { Logger } from '../../lib/logger.js';
import type { TrafficMetrics } from '../../metrics.js';
import type { Journal } from '../journal/journal.js';
import type { NewJournalEvent } from '../journal/events.js';
import { Drainer, type DrainRecord } from './drainer.js';
import type { DrainStore } from './drain-store.js';
import { SglangGateway, type GatewayClient } from './sglang-gateway.js';
import { TrafficView, type TrafficAnswer } from './view.js';

/** What the status page shows of a target's traffic (declared by its reader, outputs/server/status-view.ts). */
export interface TargetTrafficStatus {
  backends: TrafficAnswer[];
  drain?: ReturnType<Drainer['status']> & { worker: string; gateway: string; backend: string };
}

export interface Traffic {
  view: TrafficView;
  /** The drain ledgers' file, one per daemon (a reload hands it on). */
  store: DrainStore;
  drainers: Map<string, Drainer>;
  status(target: string): TargetTrafficStatus;
  stop(): Promise<void>;
}

export interface TrafficDeps {
  metrics: TrafficMetrics;
  logger: Logger;
  journal: Pick<Journal, 'append'>;
  store: DrainStore;
  previous?: Traffic;
  now?: () => number;
  /** Tests hand in a gateway double; the SGLang gateway otherwise. */
  gateway?: (target: string) => GatewayClient;
}

/** The journal's `drain` / `undrain` event for one record. */
export function drainEvent(r: DrainRecord): NewJournalEvent {
  const what = r.result === 'dry_run' ? 'would run (dry run)' : r.result;
  return {
    time: r.at,
    target: r.target,
    type: r.action,
    summary: `${r.action} ${r.worker} from ${r.gateway} ${what}: ${r.detail} (${r.state}${r.diagnosis !== null ? `, ${r.diagnosis}` : ''})`,
    data: {
      backend: r.backend,
      ...(r.pool !== undefined ? { pool: r.pool } : {}),
      result: r.result,
      worker: r.worker,
      gateway: r.gateway,
      state: r.state,
      diagnosis: r.diagnosis,
    },
  };
}

export function createTraffic(config: Config, deps: TrafficDeps): Traffic {
  const view = new TrafficView({
    targets: config.targets.map((t) => ({
      name: t.name,
      endpoints: t.endpoints.map((e) => e.name),
      wedgeAfter: t.detect.wedgeAfter,
      downAfter: t.detect.downAfter,
    })),
    readiness: config.web.readiness,
    pools: config.pools,
    metrics: deps.metrics,
    ...(deps.now !== undefined ? { now: deps.now } : {}),
    ...(deps.previous !== undefined ? { previous: deps.previous.view.carry() } : {}),
  });
  const drainers = new Map<string, Drainer>();
  const gateways: GatewayClient[] = [];
  const unsubscribe: (() => void)[] = [];
  for (const t of config.targets) {
    if (t.drain === undefined) continue;
    // The pool member that stands for this target (checkTraffic made sure there is one).
    const backend = config.pools
      .flatMap((p) => p.members)
      .map((m) => memberKey(m.target, m.endpoint))
      .find((k) => k === t.name || k.startsWith(`${t.name}/`))!;
    const gateway = deps.gateway?.(t.name) ?? new SglangGateway(t.drain);
    gateways.push(gateway);
    const drainer = new Drainer({
      target: t.name,
      backend,
      config: t.drain,
      gateway,
      metrics: deps.metrics,
      logger: deps.logger,
      onRecord: (r) => deps.journal.append(drainEvent(r)),
      onLedger: (l) => deps.store.save(t.name, l),
      ledger: deps.previous?.drainers.get(t.name)?.ledger ?? deps.store.get(t.name),
      ...(deps.now !== undefined ? { now: deps.now } : {}),
    });
    drainers.set(t.name, drainer);
    unsubscribe.push(view.subscribe(backend, (a) => drainer.consider(a)));
  }
  return {
    view,
    store: deps.store,
    drainers,
    status(target) {
      const keys = new Set([
        target,
        ...(config.targets.find((t) => t.name === target)?.endpoints ?? []).map((e) =>
          memberKey(target, e.name),
        ),
      ]);
      const d = drainers.get(target);
      const cfg = config.targets.find((t) => t.name === target)?.drain;
      return {
        backends: view.all().filter((a) => keys.has(a.backend)),
        ...(d !== undefined && cfg !== undefined
          ? { drain: { ...d.status(), worker: cfg.worker, gateway: cfg.url, backend: d.backend } }
          : {}),
      };
    },
    async stop() {
      for (const u of unsubscribe) u();
      // A gateway call in flight ends by its own timeout; its result lands in the shared ledger.
      await Promise.allSettled([...drainers.values()].map((d) => d.idle()));
      await Promise.allSettled(gateways.map((g) => g.close()));
    },
  };
}
