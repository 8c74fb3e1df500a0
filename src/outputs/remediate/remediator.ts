// The opt-in action on a confirmed wedge, per target: decides with the pure policy, runs the command
// (or only reports it in dry-run), counts wedgewatch_remediations_total, and honours an operator pause.
import type { RemediateConfig } from '../../config/schema.js';
import type { TargetStateName } from '../../core/vocabulary.js';
import type { Logger } from '../../lib/logger.js';
import type { TargetMetrics } from '../../metrics.js';
import { remediationAction } from './action.js';
import { runCommand, type ExecOptions, type ExecResult } from '../../lib/exec.js';
import {
  lockHeld,
  procStartTime,
  type LastRun,
  type RemediationHistory,
  type RunningLock,
} from './history.js';
import { decide, newLedger, recordRun, type Ledger, type SkipReason } from './policy.js';

export interface RemediationRecord {
  at: number;
  target: string;
  action: string;
  argv: string[];
  diagnosis: string;
  result: 'success' | 'failure' | 'timeout' | 'interrupted' | 'dry_run' | 'cooldown' | 'capped' | 'paused';
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
  /** The persisted history (stateDir): restored when there is no `previous`, saved on every run. */
  history?: RemediationHistory;
  /** How often a command left running by an earlier process is checked for exit (tests shorten it). */
  orphanPollMs?: number;
}

/** Run history and the run in flight: handed from remediator to remediator across reloads. */
export interface RemediatorCarry {
  ledger: Ledger;
  running: Promise<void> | undefined;
  /** Cuts this process's own command in flight (shutdown); absent for a command an earlier process left. */
  interrupt?: AbortController;
}

/**
 * How long a shutdown waits for a remediation command in flight before it cuts the command's process group (TERM,
 * then KILL after SHUTDOWN_KILL_AFTER_MS). Both fit within the CLI's shutdown deadline (src/commands/run.ts).
 */
export const SHUTDOWN_GRACE_MS = 2500;
export const SHUTDOWN_KILL_AFTER_MS = 500;
/** TERM to KILL for a command an earlier process left running past its timeout (as exec.ts does on a timeout). */
const ORPHAN_KILL_AFTER_MS = 5000;

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
  /** The outcome of the last command this process ran, saved with the history. */
  private last: LastRun | undefined;
  readonly action: string;

  constructor(private readonly opts: RemediatorOptions) {
    this.now = opts.now ?? Date.now;
    // Shared, not copied: until the old runtime stops, its remediator and this one see the same runs.
    this.shared = opts.previous ?? this.restore();
    this.action = remediationAction(opts.config.command);
    opts.metrics.remediationPaused.set({ target: opts.target }, 0);
  }

  /** The ledger from stateDir, and a command an earlier process started that still runs (it holds the lock). */
  private restore(): RemediatorCarry {
    const carry: RemediatorCarry = { ledger: newLedger(), running: undefined };
    const h = this.opts.history?.get(this.opts.target);
    if (h === undefined) return carry;
    carry.ledger.lastRunAt = h.lastRunAt;
    carry.ledger.runs = [...h.runs];
    const orphan = h.running;
    if (orphan !== undefined && lockHeld(orphan)) {
      this.opts.logger.warn(
        { target: this.opts.target, pid: orphan.pid },
        'a remediation started before the restart still runs; no new run until it exits',
      );
      // Its own process (killed with -9) can no longer enforce the timeout: this one does, on the whole group.
      const signalGroup = (sig: NodeJS.Signals) => {
        try {
          process.kill(-orphan.pid, sig);
        } catch {
          // gone already
        }
      };
      const overdue = orphan.startedAt + this.opts.config.timeout - this.now();
      const timers: NodeJS.Timeout[] = [];
      const cut = setTimeout(
        () => {
          this.opts.logger.warn(
            { target: this.opts.target, pid: orphan.pid },
            'the remediation left by the earlier process ran past its timeout; stopping its process group',
          );
          signalGroup('SIGTERM');
          timers.push(setTimeout(() => signalGroup('SIGKILL'), ORPHAN_KILL_AFTER_MS).unref());
        },
        Math.max(0, overdue),
      );
      cut.unref();
      timers.push(cut);
      carry.running = new Promise<void>((resolve) => {
        const t = setInterval(() => {
          if (lockHeld(orphan)) return;
          clearInterval(t);
          resolve();
        }, this.opts.orphanPollMs ?? 1000);
        t.unref();
      }).finally(() => {
        for (const t of timers) clearTimeout(t);
        carry.running = undefined;
        this.save(undefined);
      });
    }
    return carry;
  }

  private save(running: RunningLock | undefined): void {
    const history = this.opts.history;
    if (history === undefined) return;
    const l = this.shared.ledger;
    history.set(this.opts.target, {
      ...history.get(this.opts.target),
      lastRunAt: l.lastRunAt,
      runs: l.runs,
      running,
      ...(this.last !== undefined ? { last: this.last } : {}),
    });
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

  /** Waits for a command in flight (tests). */
  async idle(): Promise<void> {
    await this.shared.running;
  }

  /**
   * Shutdown: waits up to graceMs for this process's command in flight, then cuts its process group (TERM, KILL
   * after SHUTDOWN_KILL_AFTER_MS) and waits for it to go, so no orphan outlives the daemon and the run is recorded
   * (result `interrupted`) and its lock released. A command an earlier process left running is not ours to wait
   * for: its lock stays in the history for the next start.
   */
  async shutdown(graceMs = SHUTDOWN_GRACE_MS): Promise<void> {
    const { running, interrupt } = this.shared;
    if (running === undefined || interrupt === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      running.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), graceMs))),
    ]);
    clearTimeout(timer);
    if (waited) return;
    this.opts.logger.warn(
      { component: 'remediate', target: this.opts.target, graceMs },
      'shutting down: the remediation command is still running; stopping its process group',
    );
    interrupt.abort();
    await running;
  }

  /** Called on every classifier step and tick with the target's current state. */
  consider(target: {
    state: TargetStateName;
    since: number;
    diagnosis: string | null;
    /** The verdict of the last evaluation before hysteresis (TargetMemory.verdict): re-checked just before acting. */
    verdict?: TargetStateName;
  }): void {
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
    this.save(undefined);
    if (cfg.dryRun) {
      this.record({ ...base, result: 'dry_run' });
      return;
    }
    const exec = this.opts.exec ?? runCommand;
    const shared = this.shared;
    const interrupt = new AbortController();
    shared.interrupt = interrupt;
    shared.running = exec(cfg.command, {
      env: { WEDGEWATCH_TARGET: this.opts.target, WEDGEWATCH_DIAGNOSIS: diagnosis },
      timeoutMs: cfg.timeout,
      onSpawn: (pid) => {
        const procStart = procStartTime(pid);
        this.save({ pid, startedAt: now, ...(procStart !== undefined ? { procStart } : {}) });
      },
      signal: interrupt.signal,
      interruptKillAfterMs: SHUTDOWN_KILL_AFTER_MS,
    })
      .then(
        (r) => {
          this.last = { at: now, result: r.result, durationMs: Math.round(r.durationMs) };
          this.record({
            ...base,
            result: r.result,
            durationMs: r.durationMs,
            output: r.output,
            code: r.code,
          });
        },
        (err: unknown) => {
          this.last = { at: now, result: 'failure' };
          this.record({ ...base, result: 'failure', output: String(err) });
        },
      )
      .finally(() => {
        shared.running = undefined;
        shared.interrupt = undefined;
        this.save(undefined);
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
