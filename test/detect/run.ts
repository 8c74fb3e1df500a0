// The one driver of the classifier's tests: a fake clock and the reducer, so each test reads as a timeline.
// Every signal advances the clock first (by `advance` ms), then is reduced at the new time.
import { reduce } from '../../src/core/reduce/reduce.js';
import {
  initialState,
  type ClassifierConfig,
  type Step,
  type TargetMemory,
  type TickSignal,
} from '../../src/core/memory.js';
import type {
  ConnKind,
  EngineSignal,
  LogEventSignal,
  ProbeResultSignal,
  Signal,
} from '../../src/core/signals.js';

type Result = ProbeResultSignal['result'];

export interface RunOptions {
  /** First-token time every passing probe reports unless the test says otherwise (for ttft objectives). */
  okTtftMs?: number;
}

export class Run {
  now = 1_000_000;
  s: TargetMemory = initialState('t', this.now);
  steps: Step[] = [];

  constructor(
    readonly cfg: ClassifierConfig,
    private readonly opts: RunOptions = {},
  ) {}

  feed(sig: Signal | TickSignal, advance = 100): Step {
    this.now += advance;
    const step = reduce(this.s, sig, this.now, this.cfg);
    this.s = step.state;
    this.steps.push(step);
    return step;
  }

  /** A chat probe on a fresh connection, passing and started at the previous signal, unless `p` says otherwise. */
  probe(p: Partial<ProbeResultSignal> & { endpoint: string; conn?: ConnKind }, advance = 100): Step {
    const ok = p.result === undefined || p.result === 'ok';
    return this.feed(
      {
        kind: 'probe',
        target: 't',
        probe: 'chat',
        probeKind: 'chat',
        conn: 'fresh',
        result: 'ok',
        start: this.now,
        durationMs: 50,
        // A failed run got no first token unless the test says so (a timeout in the first_token phase has none).
        ...(ok && this.opts.okTtftMs !== undefined ? { ttftMs: this.opts.okTtftMs } : {}),
        ...p,
      },
      advance,
    );
  }

  /**
   * One round of chat probes on every hop and both connection kinds: the slots `where` picks (all by default)
   * return `result`, the others pass.
   */
  round(
    result: Result = 'ok',
    where: { endpoint?: string; conn?: ConnKind } | ((endpoint: string, conn: ConnKind) => boolean) = {},
  ): void {
    const hit =
      typeof where === 'function'
        ? where
        : (endpoint: string, conn: ConnKind) =>
            (!where.endpoint || where.endpoint === endpoint) && (!where.conn || where.conn === conn);
    for (const endpoint of this.cfg.hops) {
      for (const conn of ['fresh', 'keepalive'] as const) {
        this.probe({
          endpoint,
          conn,
          result: hit(endpoint, conn) ? result : 'ok',
          reusedConnection: conn === 'keepalive',
        });
      }
    }
  }

  log(p: Partial<LogEventSignal>): Step {
    return this.feed({
      kind: 'log',
      target: 't',
      service: 'prefill',
      rule: 'some_rule',
      class: 'custom',
      severity: 'info',
      line: '',
      file: '/x.log',
      offset: 0,
      time: this.now + 100,
      fields: {},
      ...p,
    });
  }

  /** SGLang's prefill abort line for request `rid` (undefined: a line without a request id). */
  abort(rid: string | undefined): Step {
    return this.feed({
      kind: 'log',
      target: 't',
      service: 'prefill',
      rule: 'sglang_prefill_bootstrap_aborted',
      class: 'abort',
      severity: 'warning',
      line: `Prefill bootstrap failed for request rank=0 req.rid='${rid ?? 'x'}' req.bootstrap_room=1 with exception KVTransferError(bootstrap_room=1): Aborted by AbortReq.`,
      file: '/p.log',
      offset: 0,
      time: this.now,
      fields: rid === undefined ? {} : { rid },
    });
  }

  engine(p: Partial<EngineSignal>, advance = 1000): Step {
    return this.feed(
      {
        kind: 'engine',
        target: 't',
        service: 'decode',
        source: 'metrics',
        time: this.now,
        scrapeOk: true,
        ...p,
      },
      advance,
    );
  }

  /** Each transition as `state/diagnosis` (`-` for none). */
  transitions(): string[] {
    return this.steps.flatMap((s) =>
      s.transition ? [`${s.transition.to}/${s.transition.diagnosis ?? '-'}`] : [],
    );
  }

  /** The diagnosis after every step. */
  diagnoses(): Array<string | null> {
    return this.steps.map((s) => s.state.diagnosis);
  }

  get verdict(): string {
    return `${this.s.state}/${this.s.diagnosis}`;
  }
}
