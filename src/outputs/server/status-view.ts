// What /api/status and the status page show of one target: the watchdog (src/watchdog.ts) builds it, the routes
// read it. Declared on the reading side, so the server never imports the shell that runs the core.
import type { SlotMemory, TargetMemory } from '../../core/memory.js';
import type { JournalEvent, JournalEventOf } from '../journal/events.js';
import type { PauseRecord } from '../remediate/history.js';
import type { TrafficAnswer } from '../traffic/view.js';

/** In or out of rotation per backend, held in by the pool rule, drained from the gateway (issue 43). */
export interface TargetTrafficStatus {
  backends: TrafficAnswer[];
  drain?: {
    out: boolean;
    dryRun: boolean;
    since?: number;
    drainsInWindow: number;
    max: number;
    worker: string;
    gateway: string;
    backend: string;
  };
}

export interface TargetStatus {
  target: string;
  state: TargetMemory['state'];
  since: number;
  diagnosis: string | null;
  cause: string;
  /** The open incident: its held diagnosis and every piece of evidence it reached (absent while ok). */
  incident?: TargetMemory['incident'];
  endpoints: string[];
  probes: Array<
    Pick<SlotMemory, 'probe' | 'probeKind' | 'endpoint' | 'conn' | 'failStreak' | 'okStreak'> &
      NonNullable<SlotMemory['last']>
  >;
  engines: TargetMemory['engines'];
  lastOkAt?: number;
  recentEvents: JournalEvent[];
  changesSinceOk: JournalEventOf<'file_change'>[];
  remediation: { configured: boolean; dryRun?: boolean; paused: boolean; pause?: PauseRecord };
  traffic?: TargetTrafficStatus;
}
