// A deployment on a virtual clock: the example config's probe schedule (every, jitter, timeout per slot, at most
// one run in flight per slot, confirmation rounds on demand) and the watchdog's 1 s tick, driving the pure
// classifier. Hours of cadence run in milliseconds, so acceptance bounds are tested with deployed settings.
import { readFileSync } from 'node:fs';
import { parseConfigText } from '../../src/config/load.js';
import type { ProbeConfig, TargetConfig } from '../../src/config/schema.js';
import { reduceInPlace } from '../../src/core/reduce/reduce.js';
import { classifierConfig } from '../../src/config/classifier-config.js';
import {
  initialState,
  type ClassifierConfig,
  type InflightRun,
  type Step,
  type TargetMemory,
  type TickSignal,
} from '../../src/core/memory.js';
import { probeConns } from '../../src/sources/probes/schedule.js';
import type { ConnKind, EngineSignal, ProbeResultClass, Signal } from '../../src/core/signals.js';
import { mulberry32 } from '../../src/sim/prng.js';
import { WAKE_SLACK_MS } from '../../src/watchdog.js';

export const EXAMPLE = new URL('../../examples/wedgewatch.yaml', import.meta.url).pathname;

/** The example config's first target, as a user deploys it. */
export function exampleTarget(): TargetConfig {
  const loaded = parseConfigText(readFileSync(EXAMPLE, 'utf8'), EXAMPLE, {});
  return loaded.config.targets[0]!;
}

/** Deterministic PRNG (mulberry32), so a failing seed can be replayed. */
export const rng: (seed: number) => () => number = mulberry32;

/** How one run goes: finishes after `ms` with `result` (and `ttftMs`), or hangs until its timeout. */
/** `loopLostMs`: of `ms`, the time the daemon's own event loop could not run (a loaded host). */
export type Outcome =
  { ms: number; result?: ProbeResultClass; ttftMs?: number; loopLostMs?: number } | 'hang';

export interface RunInfo {
  probe: ProbeConfig;
  endpoint: string;
  conn: ConnKind;
  start: number;
}

interface VSlot {
  probe: ProbeConfig;
  endpoint: string;
  conn: ConnKind;
  inflight?: { startedAt: number; token: number; ttftMs?: number; info: RunInfo; primed: boolean };
  /** The last run failed (a keep-alive slot primes a new connection for the next). */
  lastFailed?: boolean;
}

type Ev = { at: number; seq: number; fn: () => void };

/** What a recorded step keeps of the memory it left: the verdict and the runs in flight, as they were then. */
export type StepState = Pick<TargetMemory, 'state' | 'diagnosis' | 'cause' | 'inflight'>;
export type VirtualStep = Omit<Step, 'state'> & { at: number; state: StepState };

export class VirtualDeployment {
  now: number;
  readonly t0: number;
  s: TargetMemory;
  readonly cfg: ClassifierConfig;
  readonly steps: VirtualStep[] = [];
  private readonly slots: VSlot[] = [];
  private readonly queue: Ev[] = [];
  private seq = 0;
  private token = 0;
  private readonly random: () => number;
  /** The early tick asked for (Step.wakeAt), if one is set. */
  private wakeAt: number | undefined;

  constructor(
    readonly target: TargetConfig,
    /** Decides each run's outcome when it starts. */
    private readonly outcome: (run: RunInfo) => Outcome,
    seed = 1,
  ) {
    this.random = rng(seed);
    this.t0 = this.now = 1_800_000_000_000;
    this.s = initialState(target.name, this.now);
    this.cfg = classifierConfig(target);
    for (const probe of target.probes) {
      for (const endpoint of probe.endpoints ?? target.endpoints.map((e) => e.name)) {
        for (const conn of probeConns(probe)) this.slots.push({ probe, endpoint, conn });
      }
    }
    // Random phase of every schedule and of the watchdog's tick against the moment of the fault.
    for (const probe of target.probes) {
      const every = probe.every!;
      const phase = this.random() * every;
      const round = (k: number) => {
        const at = this.t0 + phase + k * every;
        this.at(at, () => {
          for (const slot of this.slots.filter((s) => s.probe === probe)) {
            this.at(this.now + this.random() * probe.jitter * every, () => this.launch(slot));
          }
          round(k + 1);
        });
      };
      round(0);
    }
    const tickPhase = this.random() * 1000;
    const tick = (k: number) =>
      this.at(this.t0 + tickPhase + k * 1000, () => {
        this.feed({ kind: 'tick', inflight: this.inflight() });
        tick(k + 1);
      });
    tick(0);
  }

  /** Runs every event up to `until` (Unix ms). */
  runUntil(until: number, stop?: () => boolean): void {
    for (;;) {
      this.queue.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const ev = this.queue[0];
      if (!ev || ev.at > until) break;
      this.queue.shift();
      this.now = ev.at;
      ev.fn();
      if (stop?.()) return;
    }
    this.now = Math.max(this.now, until);
  }

  /**
   * Runs to `until`, the engines in `services` scraped every `everyMs` on the way: `reading(service, now)` is what one
   * reports (undefined: its scrape fails).
   */
  scrapeUntil(
    until: number,
    services: readonly string[],
    reading: (service: string, now: number) => Partial<EngineSignal> | undefined,
    everyMs = 5_000,
  ): void {
    for (let t = this.now + everyMs; t <= until; t += everyMs) {
      this.runUntil(t);
      for (const service of services) {
        const r = reading(service, this.now);
        this.feed({
          kind: 'engine',
          target: this.target.name,
          service,
          source: 'metrics',
          time: this.now,
          ...(r === undefined ? { scrapeOk: false } : { scrapeOk: true, ...r }),
        });
      }
    }
    this.runUntil(until);
  }

  /** Runs until `cond` holds; returns when (Unix ms), or undefined past `until`. */
  runUntilTrue(cond: () => boolean, until: number): number | undefined {
    if (cond()) return this.now;
    this.runUntil(until, cond);
    return cond() ? this.now : undefined;
  }

  /**
   * Feeds a signal (a log line, say) at the current virtual time. The memory is reduced in place (the daemon's
   * `reduce` copies it whole first: structuredClone was half the CPU of a 10-minute run, test/detect/progress.test.ts
   * 24 s quiet); each recorded step keeps a copy of the verdict and the runs in flight instead.
   */
  feed(sig: Signal | TickSignal): Step {
    const step = reduceInPlace(this.s, sig, this.now, this.cfg);
    this.s = step.state;
    const { state, diagnosis, cause, inflight } = step.state;
    this.steps.push({
      ...step,
      at: this.now,
      state: { state, diagnosis, cause, ...(inflight ? { inflight: inflight.map((r) => ({ ...r })) } : {}) },
    });
    for (const a of step.actions) {
      // A confirmation round: every chat slot not already in flight runs now (ProbeScheduler.runNow).
      if (a.kind === 'confirm')
        for (const slot of this.slots) if (slot.probe.kind === 'chat' && !slot.inflight) this.launch(slot);
    }
    if (step.wakeAt !== undefined) this.wake(step.wakeAt);
    return step;
  }

  /** As the Watchdog does (src/watchdog.ts): one early tick at the earliest time the core asked for. */
  private wake(at: number): void {
    if (this.wakeAt !== undefined && this.wakeAt <= at) return;
    this.wakeAt = at;
    this.at(at + WAKE_SLACK_MS, () => {
      if (this.wakeAt !== at) return;
      this.wakeAt = undefined;
      this.feed({ kind: 'tick', inflight: this.inflight() });
    });
  }

  /** Runs `fn` at virtual time `at` (a log follower's poll, a line written). */
  later(at: number, fn: () => void): void {
    this.at(at, fn);
  }

  transitions(): string[] {
    return this.steps.flatMap((s) =>
      s.transition ? [`${s.transition.to}/${s.transition.diagnosis ?? '-'}`] : [],
    );
  }

  private at(at: number, fn: () => void): void {
    this.queue.push({ at, seq: this.seq++, fn });
  }

  private inflight(): InflightRun[] {
    return this.slots.flatMap((s) =>
      s.inflight
        ? [
            {
              probe: s.probe.name,
              endpoint: s.endpoint,
              conn: s.conn,
              startedAt: s.inflight.startedAt,
              // As the scheduler reports it: the first token once it has come.
              ...(s.inflight.ttftMs !== undefined && this.now >= s.inflight.startedAt + s.inflight.ttftMs
                ? { firstTokenMs: s.inflight.ttftMs }
                : {}),
            },
          ]
        : [],
    );
  }

  /**
   * A fault that begins mid-run: every run in flight whose first token has not come yet is judged again by the
   * outcome function (its start unchanged); one that now hangs never gets its first token and times out. A run past
   * its first token keeps its outcome (it is decoding: past the stage that broke).
   */
  rejudgeInflight(): void {
    for (const slot of this.slots) {
      const run = slot.inflight;
      if (!run || (run.ttftMs !== undefined && this.now >= run.startedAt + run.ttftMs)) continue;
      if (this.outcome(run.info) !== 'hang') continue;
      slot.inflight = undefined;
      this.schedule(slot, run.info, 'hang', run.primed);
    }
  }

  private launch(slot: VSlot): void {
    if (slot.inflight) return; // skipped_overlap: the classifier ignores it
    const info = { probe: slot.probe, endpoint: slot.endpoint, conn: slot.conn, start: this.now };
    // As the probe runner does: a keep-alive slot whose last run failed closed its connection, so this run
    // primes a new one (GET /v1/models) and goes second on it.
    const primed = slot.conn === 'keepalive' && slot.lastFailed === true;
    this.schedule(slot, info, this.outcome(info), primed);
  }

  private schedule(slot: VSlot, info: RunInfo, out: Outcome, primed: boolean): void {
    const start = info.start;
    const token = ++this.token;
    slot.inflight = { startedAt: start, token, info, primed };
    const timeout = slot.probe.timeout;
    const ms = out === 'hang' ? timeout : Math.min(out.ms, timeout);
    const result: ProbeResultClass = out === 'hang' || out.ms >= timeout ? 'timeout' : (out.result ?? 'ok');
    if (out !== 'hang' && out.ttftMs !== undefined) slot.inflight.ttftMs = out.ttftMs;
    this.at(start + ms, () => {
      if (slot.inflight?.token !== token) return;
      slot.inflight = undefined;
      slot.lastFailed = result !== 'ok';
      this.feed({
        kind: 'probe',
        target: this.target.name,
        probe: slot.probe.name,
        probeKind: slot.probe.kind,
        endpoint: slot.endpoint,
        conn: slot.conn,
        result,
        start,
        durationMs: ms,
        ...(out !== 'hang' && out.loopLostMs !== undefined ? { loopLostMs: out.loopLostMs } : {}),
        ...(result === 'ok' && out !== 'hang' ? { ttftMs: out.ttftMs ?? ms / 2 } : {}),
        reusedConnection: slot.conn === 'keepalive',
        ...(primed ? { primedConnection: true } : {}),
      });
    });
  }
}

/** Healthy run times on the virtual deployment (ms). */
export function healthy(run: RunInfo): Outcome {
  switch (run.probe.kind) {
    case 'chat':
      return { ms: 300, ttftMs: 120 };
    case 'toolcall':
      return { ms: 600, ttftMs: 200 };
    case 'health':
      return { ms: 5 };
    case 'serverinfo':
      return { ms: 10 };
    // canary and structured: a completion of a few tokens, as chat.
    default:
      return { ms: 300, ttftMs: 120 };
  }
}
