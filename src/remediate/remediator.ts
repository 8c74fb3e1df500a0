// The opt-in action on a confirmed wedge, per target: decides with the pure policy, runs the command
// (or only reports it in dry-run), counts wedgewatch_remediations_total, and honours an operator pause.
import { basename } from 'node:path';
import type { RemediateConfig } from '../config/schema.js';
import type { TargetStateName } from '../detect/state.js';
import type { Logger } from '../logger.js';
import type { TargetMetrics } from '../metrics.js';
import { runCommand, type ExecOptions, type ExecResult } from './exec.js';
import { decide, newLedger, recordRun, type Ledger } from './policy.js';

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
}

// Diagnoses come from a fixed vocabulary plus config-validated names; this keeps the env value inert anyway.
const safe = (s: string) => s.replace(/[^A-Za-z0-9_.:-]/g, '_').slice(0, 100);

export class Remediator {
  private readonly ledger: Ledger = newLedger();
  private readonly now: () => number;
  private running: Promise<void> | undefined;
  private paused = false;
  readonly action: string;

  constructor(private readonly opts: RemediatorOptions) {
    this.now = opts.now ?? Date.now;
    this.action = safe(basename(opts.config.command[0]!));
    opts.metrics.remediationPaused.set({ target: opts.target }, 0);
  }

  isPaused(): boolean {
    return this.paused;
  }

  setPaused(paused: boolean): void {
    this.paused = paused;
    this.opts.metrics.remediationPaused.set({ target: this.opts.target }, paused ? 1 : 0);
  }

  /** Waits for a command in flight (shutdown, tests). */
  async idle(): Promise<void> {
    await this.running;
  }

  /** Called on every classifier step and tick with the target's current state. */
  consider(target: { state: TargetStateName; since: number; diagnosis: string | null }): void {
    if (this.running) return;
    const now = this.now();
    const cfg = this.opts.config;
    const d = decide(this.ledger, target, now, cfg, this.paused);
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
    recordRun(this.ledger, now);
    if (cfg.dryRun) {
      this.record({ ...base, result: 'dry_run' });
      return;
    }
    const exec = this.opts.exec ?? runCommand;
    this.running = exec(cfg.command, {
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
        this.running = undefined;
      });
  }

  private record(r: RemediationRecord): void {
    this.opts.metrics.remediations.inc({ target: r.target, action: r.action, result: r.result });
    const log = this.opts.logger.child({ component: 'remediate', target: r.target });
    if (r.result === 'success' || r.result === 'dry_run')
      log.warn({ argv: r.argv, result: r.result, diagnosis: r.diagnosis }, 'remediation');
    else
      log.error(
        { argv: r.argv, result: r.result, diagnosis: r.diagnosis, code: r.code },
        'remediation did not run or failed',
      );
    this.opts.onRecord(r);
  }
}
