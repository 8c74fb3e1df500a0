// The opt-in action on a confirmed wedge, per target: decides with the pure policy, runs the command
// (or only reports it in dry-run), counts wedgewatch_remediations_total, and honours an operator pause.
import type { RemediateConfig } from '../config/schema.js';
import type { TargetStateName } from '../detect/state.js';
import type { Logger } from '../logger.js';
import type { TargetMetrics } from '../metrics.js';
import { remediationAction } from '../known-series.js';
import { runCommand, type ExecOptions, type ExecResult } from './exec.js';
import { decide, newLedger, recordRun, type Ledger, type SkipReason } from './policy.js';

export interface RemediationRecord {
  at: number;
  target: string;
  action: string;
  argv: string[];
  diagnosis: string;
  result: 'success' | 'failure' | 'timeout' | 'dry_run' | 'cooldown' | 'capped' | 'paused';
  durationMs?: number;
  output?: string;
  code?: number | null;
}

export interface RemediatorOptions {
  target: string;
  config: RemediateConfig;
  metrics: Pick<TargetMetrics, 'remediations' | 'remediationPaused'>;
  logger: Logger;
  onRecord: (r: RemediationRecord) => void;
  now?: () => number;
  /** Injectable for tests; defaults to the real spawn. */
  exec?: (argv: string[], opts: ExecOptions) => Promise<ExecResult>;
  /** Run history (and a run in flight) of the remediator a reload replaces: cooldown and cap carry over. */
  previous?: RemediatorCarry;
}

/** Run history and the run in flight: handed from remediator to remediator across reloads. */
export interface RemediatorCarry {
  ledger: Ledger;
  running: Promise<void> | undefined;
}

const SKIPPED: Record<SkipReason, string> = {
  cooldown: 'remediation skipped: still in the cooldown after the last run',
  capped: 'remediation skipped: maxPerHour reached',
  paused: 'remediation skipped: paused by an operator',
};

// Diagnoses come from a fixed vocabulary plus config-validated names; this keeps the env value inert anyway.
const safe = (s: string) => s.replace(/[^A-Za-z0-9_.:-]/g, '_').slice(0, 100);

export class Remediator {
  private readonly shared: RemediatorCarry;
  private readonly now: () => number;
  private paused = false;
  readonly action: string;

  constructor(private readonly opts: RemediatorOptions) {
    this.now = opts.now ?? Date.now;
    // Shared, not copied: until the old runtime stops, its remediator and this one see the same runs.
    this.shared = opts.previous ?? { ledger: newLedger(), running: undefined };
    this.action = remediationAction(opts.config.command);
    opts.metrics.remediationPaused.set({ target: opts.target }, 0);
  }

  isPaused(): boolean {
    return this.paused;
  }

  setPaused(paused: boolean): void {
    this.paused = paused;
    this.opts.metrics.remediationPaused.set({ target: this.opts.target }, paused ? 1 : 0);
  }

  /** What a replacement (config reload) needs to keep the cooldown, the hourly cap and a run in flight. */
  carry(): RemediatorCarry {
    return this.shared;
  }

  /** Waits for a command in flight (shutdown, tests). */
  async idle(): Promise<void> {
    await this.shared.running;
  }

  /** Called on every classifier step and tick with the target's current state. */
  consider(target: { state: TargetStateName; since: number; diagnosis: string | null }): void {
    if (this.shared.running) return;
    const now = this.now();
    const cfg = this.opts.config;
    const d = decide(this.shared.ledger, target, now, cfg, this.paused);
    const diagnosis = safe(target.diagnosis ?? target.state);
    const base = {
      at: now,
      target: this.opts.target,
      action: this.action,
      argv: [...cfg.command],
      diagnosis,
    };
    if (d.kind === 'skip') {
      if (d.report) this.record({ ...base, result: d.reason });
      return;
    }
    if (d.kind !== 'run') return;
    recordRun(this.shared.ledger, now);
    if (cfg.dryRun) {
      this.record({ ...base, result: 'dry_run' });
      return;
    }
    const exec = this.opts.exec ?? runCommand;
    const shared = this.shared;
    shared.running = exec(cfg.command, {
      env: { WEDGEWATCH_TARGET: this.opts.target, WEDGEWATCH_DIAGNOSIS: diagnosis },
      timeoutMs: cfg.timeout,
    })
      .then(
        (r) =>
          this.record({
            ...base,
            result: r.result,
            durationMs: r.durationMs,
            output: r.output,
            code: r.code,
          }),
        (err: unknown) => this.record({ ...base, result: 'failure', output: String(err) }),
      )
      .finally(() => {
        shared.running = undefined;
      });
  }

  private record(r: RemediationRecord): void {
    this.opts.metrics.remediations.inc({ target: r.target, action: r.action, result: r.result });
    const log = this.opts.logger.child({ component: 'remediate', target: r.target });
    if (r.result === 'success' || r.result === 'dry_run')
      log.warn({ argv: r.argv, result: r.result, diagnosis: r.diagnosis }, 'remediation');
    else if (r.result === 'cooldown' || r.result === 'capped' || r.result === 'paused')
      // The policy working as configured, not a fault: logged once per wedge and reason (policy.ts reports it once).
      log.info({ result: r.result, diagnosis: r.diagnosis }, SKIPPED[r.result]);
    else
      log.error(
        { argv: r.argv, result: r.result, diagnosis: r.diagnosis, code: r.code },
        'remediation failed',
      );
    this.opts.onRecord(r);
  }
}
