// When to capture, for one target, and the hand-off to remediation. The watchdog reports every verdict change;
// the onset of a configured state or diagnosis starts one capture per episode (an episode ends when the target is
// ok again). The promise handed back settles when the capture is done or captureTimeout has passed, whichever is
// first: remediation waits for it, never longer.
import type { IncidentsConfig } from '../../config/schema.js';
import type { Journal } from '../journal/journal.js';
import type { TargetMemory } from '../../core/memory.js';
import type { Logger } from '../../lib/logger.js';
import type { IncidentMetrics } from '../../metrics.js';
import { CAPTURE_RESULTS, captureIncident, type CaptureDeps, type CaptureOutcome } from './capture.js';
import { enforceRetention, incidentsDir } from './store.js';

export interface TargetIncidentsOptions {
  deps: CaptureDeps;
  metrics: IncidentMetrics;
  logger: Logger;
  journal: Journal;
  /** From the TargetIncidents a reload replaces: whether this episode is already captured. */
  previous?: IncidentsCarry;
  now?: () => number;
}

export interface IncidentsCarry {
  episodeCaptured: boolean;
  running?: Promise<CaptureOutcome>;
}

/** The part of a target's state the trigger looks at. */
export type VerdictView = Pick<TargetMemory, 'state' | 'diagnosis'>;

export function triggers(cfg: IncidentsConfig, prev: VerdictView, next: VerdictView): boolean {
  if (!cfg.enabled) return false;
  if (prev.state === next.state && prev.diagnosis === next.diagnosis) return false;
  return cfg.on.includes(next.state) || (next.diagnosis !== null && cfg.on.includes(next.diagnosis));
}

export class TargetIncidents {
  private readonly carried: IncidentsCarry;
  private readonly now: () => number;
  private readonly log: Logger;

  constructor(private readonly o: TargetIncidentsOptions) {
    this.carried = o.previous ?? { episodeCaptured: false };
    this.now = o.now ?? Date.now;
    this.log = o.logger.child({ component: 'incidents', target: o.deps.target.name });
    for (const result of CAPTURE_RESULTS)
      o.metrics.incidentsTotal.inc({ target: o.deps.target.name, result }, 0);
  }

  carry(): IncidentsCarry {
    return this.carried;
  }

  /** Waits for a capture in flight (shutdown, tests). */
  async idle(): Promise<void> {
    await this.carried.running;
  }

  /**
   * Called by the watchdog on every verdict change. Returns the hand-off when a capture started: it settles when
   * the capture finished or captureTimeout passed, whichever is first.
   */
  onVerdict(prev: VerdictView, next: TargetMemory): Promise<void> | undefined {
    if (next.state === 'ok') {
      this.carried.episodeCaptured = false;
      return undefined;
    }
    const cfg = this.o.deps.config;
    if (this.carried.episodeCaptured || this.carried.running || !triggers(cfg, prev, next)) return undefined;
    this.carried.episodeCaptured = true;
    const running = this.capture(next);
    this.carried.running = running;
    void running.finally(() => {
      if (this.carried.running === running) this.carried.running = undefined;
    });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, cfg.captureTimeout);
    });
    return Promise.race([running.then(() => undefined), deadline]).finally(() => clearTimeout(timer));
  }

  private async capture(s: TargetMemory): Promise<CaptureOutcome> {
    const target = this.o.deps.target.name;
    let out: CaptureOutcome;
    try {
      out = await captureIncident(this.o.deps, s);
    } catch (err) {
      // captureIncident reports its own failures; this is a bug, and it must not stop remediation.
      out = { result: 'failed', durationMs: 0, bytes: 0, files: 0, detail: String(err) };
    }
    this.o.metrics.incidentsTotal.inc({ target, result: out.result });
    this.o.metrics.incidentCaptureDuration.observe(out.durationMs / 1000);
    const secs = (out.durationMs / 1000).toFixed(1);
    let summary: string;
    if (out.dir !== undefined) {
      summary = `incident bundle ${out.dir} (${out.result}, ${out.files} files, ${kb(out.bytes)}, ${secs} s)`;
      this.log.warn(
        { dir: out.dir, result: out.result, files: out.files, bytes: out.bytes },
        'incident captured',
      );
      try {
        const removed = await enforceRetention(
          incidentsDir(this.o.deps.stateDir),
          this.o.deps.config.retention,
        );
        if (removed.length > 0) this.log.info({ removed }, 'incident retention removed old bundles');
      } catch (err) {
        this.log.error({ err: (err as Error).message }, 'incident retention failed');
      }
    } else {
      summary = `incident capture ${out.result === 'no_space' ? 'skipped, disk full' : 'failed'}: ${out.detail ?? ''}`;
      this.log.error({ result: out.result, detail: out.detail }, 'incident not captured');
    }
    this.o.journal.append({
      time: this.now(),
      target,
      type: 'incident',
      summary,
      data: {
        id: out.id,
        dir: out.dir,
        result: out.result,
        files: out.files,
        bytes: out.bytes,
        durationMs: Math.round(out.durationMs),
        detail: out.detail,
      },
    });
    return out;
  }
}

function kb(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${(n / 1024).toFixed(1)} kB`;
}
