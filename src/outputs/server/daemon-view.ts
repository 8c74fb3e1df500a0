// What the route plugins read of the running daemon; src/daemon.ts's Daemon satisfies it. Declared here so the
// server never imports the composition root: the root builds the server, never the reverse (one-way folders,
// test/ops/layout.test.ts).
import type { LoadedConfig } from '../../config/load.js';
import type { ProbeHistory } from '../../sources/probes/history.js';
import type { ProbeScheduler } from '../../sources/probes/schedule.js';
import type { Journal } from '../journal/journal.js';
import type { RemediationControl } from './remediation-routes.js';
import type { TargetStatus } from './status-view.js';
import type { ReadyView } from './ready-routes.js';

/** The running watchdog: per-target status, the events journal and remediation pause/resume. */
export interface WatchdogView extends RemediationControl {
  readonly targets: ReadonlyMap<string, unknown>;
  readonly journal: Journal;
  status(): TargetStatus[];
}

/** The running runtime (replaced on reload, so routes look it up per request). */
export interface RuntimeView {
  readonly probes?: ReadonlyMap<string, ProbeScheduler>;
  readonly watchdog?: WatchdogView;
  readonly probeHistory?: ProbeHistory;
  /** GET /ready's cached answers (src/outputs/traffic/view.ts). */
  readonly traffic?: { readonly view: ReadyView extends { traffic(): infer V } ? NonNullable<V> : never };
}

export interface DaemonView {
  readonly loaded: LoadedConfig;
  readonly runtime?: RuntimeView;
  readonly web?: { readonly auth: { enabled(): boolean } };
  lifecycleEnabled(): boolean;
}
