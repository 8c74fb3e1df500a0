// Issue 41 items 1, 2, 4 and 9 (and issue 38's "busy is never wedged") on the virtual clock, with the example
// config's probe cadence and timeouts and an engine scraped every 5 s (examples/wedgewatch.yaml): progress, not
// gauges; stalls that clear by themselves; requests the engine never sees; an engine busy with long generations.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { EngineSignal } from '../../src/core/signals.js';
import {
  exampleTarget,
  healthy,
  VirtualDeployment,
  type Outcome,
  type RunInfo,
} from './virtual-deployment.js';
import { isCompletion } from '../../src/core/vocabulary.js';
import { parseConfigText } from '../../src/config/load.js';
import type { TargetConfig } from '../../src/config/schema.js';

const SCRAPE_MS = 5_000;
/** vLLM's stats line interval (VLLM_LOG_STATS_INTERVAL, 10 s). */
const STATS_MS = 10_000;
const VLLM_EXAMPLE = new URL('../../examples/vllm.yaml', import.meta.url).pathname;
const SEEDS = [1, 2, 3, 4, 5, 6];

/** What the engines report at one scrape (undefined: the scrape fails). */
type Reading = Partial<EngineSignal> | undefined;

/**
 * A virtual deployment whose decode and prefill engines are scraped every 5 s: `reading(now)` says what they
 * report. Runs `minutes` from the start, returning the deployment.
 */
function deployment(outcome: (r: RunInfo) => Outcome, reading: (now: number) => Reading, seed: number) {
  const v = new VirtualDeployment(exampleTarget(), outcome, seed);
  const run = (until: number) =>
    v.scrapeUntil(until, ['decode', 'prefill'], (_service, now) => reading(now), SCRAPE_MS);
  return { v, run };
}

/** A healthy engine between probes: nothing running or waiting, its counters moving with our probes' tokens. */
const idleReading = (now: number): Reading => ({
  running: 0,
  queued: 0,
  generatedTokensTotal: Math.floor(now / 1000) * 16,
  finishedTotal: Math.floor(now / 1000),
});

const states = (v: VirtualDeployment, from: number) =>
  v.steps.filter((s) => s.at >= from).map((s) => `${s.state.state}/${s.state.diagnosis ?? '-'}`);

describe('progress, not gauges (issue 41 item 1)', () => {
  it.each(SEEDS)(
    'an engine whose gauges freeze at 0 running / 0 queued while every completion hangs is engine_stalled, not completions_hung (seed %i)',
    (seed) => {
      let faultAt = Infinity;
      let frozen: Reading;
      const { v, run } = deployment(
        (r) => (isCompletion(r.probe.kind) && r.start >= faultAt ? 'hang' : healthy(r)),
        (now) => {
          if (now < faultAt) return (frozen = idleReading(now));
          return frozen; // the same values at every scrape from the fault on
        },
        seed,
      );
      run(v.t0 + 10 * 60_000);
      expect(v.s.state).toBe('ok');
      faultAt = v.now + 7_000 * (seed % 3);
      run(faultAt + 90_000);
      const after = states(v, faultAt);
      expect(after).toContain('wedged/engine_stalled');
      // Named before the gauge stall clock (stallAfter 60 s) could have: it never runs on 0/0.
      const at = v.steps.find((s) => s.at >= faultAt && s.state.diagnosis === 'engine_stalled')!.at;
      expect(at - faultAt).toBeLessThan(60_000);
      expect(v.s.cause).toMatch(/nothing running and nothing waiting/);
    },
  );

  it.each(SEEDS)(
    'an engine whose /metrics stops answering while completions hang is engine_stalled (seed %i)',
    (seed) => {
      let faultAt = Infinity;
      const { v, run } = deployment(
        (r) => (isCompletion(r.probe.kind) && r.start >= faultAt ? 'hang' : healthy(r)),
        (now) => (now < faultAt ? idleReading(now) : undefined),
        seed,
      );
      run(v.t0 + 10 * 60_000);
      faultAt = v.now + 3_000 * seed;
      run(faultAt + 90_000);
      expect(states(v, faultAt)).toContain('wedged/engine_stalled');
      expect(v.s.cause).toMatch(/\/metrics failing/);
    },
  );

  it('a hang while the engine makes tokens for others is not engine_stalled (the engine works: the path holds it)', () => {
    let faultAt = Infinity;
    const { v, run } = deployment(
      (r) => (isCompletion(r.probe.kind) && r.start >= faultAt ? 'hang' : healthy(r)),
      (now) => ({ ...idleReading(now), running: 2, queued: 0 }),
      1,
    );
    run(v.t0 + 10 * 60_000);
    faultAt = v.now;
    run(faultAt + 50_000);
    expect(states(v, faultAt)).not.toContain('wedged/engine_stalled');
  });
});

/** examples/vllm.yaml's first target; completion probes time out at `timeoutMs` when given. */
function vllmTarget(timeoutMs?: number): TargetConfig {
  const t = parseConfigText(readFileSync(VLLM_EXAMPLE, 'utf8'), VLLM_EXAMPLE, {}).config.targets[0]!;
  if (timeoutMs !== undefined) for (const p of t.probes) if (isCompletion(p.kind)) p.timeout = timeoutMs;
  return t;
}

/**
 * A vLLM core that hangs between requests with no log line (sim fault metrics_frozen): its /metrics answers with the
 * values of the moment it stopped (so the first scrape after still shows the counters moved since the scrape before),
 * and its stats line — printed every 10 s, averaging the tokens made since the last one (vllm/v1/metrics/loggers.py
 * LoggingStatLogger.log, VLLM_LOG_STATS_INTERVAL) — reports the last interval's tokens once more after the hang, then
 * zero once, then nothing (an idle logger logs at DEBUG). Returns the labels from the fault on and when
 * engine_stalled was first named (ms after the fault), or undefined.
 */
function frozenCoreWithStatsLine(seed: number, timeoutMs?: number) {
  let faultAt = Infinity;
  const v = new VirtualDeployment(
    vllmTarget(timeoutMs),
    (r) => (isCompletion(r.probe.kind) && r.start >= faultAt ? 'hang' : healthy(r)),
    seed,
  );
  const service = v.target.engines[0]!.service;
  const feed = (source: 'metrics' | 'log', fields: Partial<EngineSignal>) =>
    v.feed({ kind: 'engine', target: v.target.name, service, source, time: v.now, ...fields });
  // The scrape and the stats line each at a phase of their own against the probes.
  const scrapePhase = (seed * 1_700) % SCRAPE_MS;
  const linePhase = (seed * 3_100) % STATS_MS;
  let lastLine = -Infinity;
  let lastHadTokens = true;
  const run = (until: number) => {
    const events: Array<{ at: number; what: 'scrape' | 'line' }> = [];
    // The first time after now on each schedule.
    const first = (phase: number, every: number) =>
      v.t0 + phase + Math.floor((v.now - v.t0 - phase) / every + 1) * every;
    for (let t = first(scrapePhase, SCRAPE_MS); t <= until; t += SCRAPE_MS)
      events.push({ at: t, what: 'scrape' });
    for (let t = first(linePhase, STATS_MS); t <= until; t += STATS_MS) events.push({ at: t, what: 'line' });
    events.sort((a, b) => a.at - b.at);
    for (const ev of events) {
      v.runUntil(ev.at);
      if (ev.what === 'scrape') {
        // Frozen at the moment the core stopped: 0 running, 0 waiting, the counters as they were then.
        const r = idleReading(Math.min(v.now, faultAt))!;
        feed('metrics', { scrapeOk: true, ...r });
      } else {
        // Tokens were made in this interval if it began before the hang.
        const tokens = lastLine < faultAt;
        lastLine = v.now;
        if (!tokens && !lastHadTokens) continue;
        lastHadTokens = tokens;
        feed('log', { running: 0, queued: 0, genThroughput: tokens ? 16 : 0, progress: tokens });
      }
    }
    v.runUntil(until);
  };
  run(v.t0 + 10 * 60_000);
  expect(v.s.state).toBe('ok');
  faultAt = v.now + 1_000 * seed;
  run(faultAt + 3 * 60_000);
  const named = v.steps.find((x) => x.at >= faultAt && x.state.diagnosis === 'engine_stalled');
  return { after: states(v, faultAt), ms: named === undefined ? undefined : named.at - faultAt, v };
}

describe("a reading after a hang may report tokens made before it (issue 41 item 1: vLLM's stats line)", () => {
  // Twelve phases of the line and the scrape against the probes: where the line after the hang comes before the first
  // timeout of every failing slot's streak, it once held the stall off for good (2 of the 12).
  it.each(Array.from({ length: 12 }, (_, i) => i + 1))(
    'completions timing out under hangAfter (10 s): the stats line after the hang is no progress since the streak began; engine_stalled, not completions_failing for good (seed %i)',
    (seed) => {
      const { after, ms } = frozenCoreWithStatsLine(seed, 10_000);
      expect(after).toContain('wedged/engine_stalled');
      // hangAfter (20 s) and three 5 s readings past the last tokens, the seen window's floor, a tick.
      expect(ms).toBeLessThan(60_000);
    },
  );
});

describe('a router that holds our requests while the engines idle (router_stuck)', () => {
  /**
   * The SGLang example: the router scraped beside both legs, each leg printing a batch line while it runs our probes.
   * From the fault the router holds every completion: it reports them in flight, the legs report nothing running and
   * nothing waiting and print no batch line (SGLang logs one only when a batch ran). `lines: false`: no log sources.
   */
  const routerHolds = (seed: number, lines: boolean) => {
    let faultAt = Infinity;
    const { v, run } = deployment(
      (r) => (isCompletion(r.probe.kind) && r.start >= faultAt ? 'hang' : healthy(r)),
      (now) => (now < faultAt ? idleReading(now) : idleReading(faultAt)),
      seed,
    );
    const feed = (service: string, source: 'metrics' | 'log', fields: Partial<EngineSignal>) =>
      v.feed({ kind: 'engine', target: v.target.name, service, source, time: v.now, ...fields });
    const runWithRouter = (until: number) => {
      for (let t = v.now + SCRAPE_MS; t <= until; t += SCRAPE_MS) {
        // The legs' scrapes (deployment()), the router's, and a batch line from each leg while it serves.
        run(t);
        feed('router', 'metrics', { scrapeOk: true, routerInflight: v.now < faultAt ? 0 : 3, running: 0 });
        if (lines && v.now < faultAt)
          for (const service of ['decode', 'prefill'])
            feed(service, 'log', { running: 0, queued: 0, genThroughput: 40, progress: true });
      }
      run(until);
    };
    runWithRouter(v.t0 + 10 * 60_000);
    expect(v.s.state).toBe('ok');
    faultAt = v.now + 1_100 * seed;
    runWithRouter(faultAt + 4 * 60_000);
    return states(v, faultAt);
  };

  it.each(SEEDS)(
    "the legs' batch lines stop because they idle, not because they stalled: router_stuck, never engine_stalled (seed %i)",
    (seed) => {
      const after = routerHolds(seed, true);
      expect(after).toContain('wedged/router_stuck');
      expect(after.filter((x) => x.endsWith('/engine_stalled'))).toEqual([]);
    },
  );

  it('the same hold with no log sources is router_stuck too (what the lines changed)', () => {
    expect(routerHolds(1, false)).toContain('wedged/router_stuck');
  });
});

describe('busy is not wedged (issue 41 item 9, issue 38)', () => {
  it.each(SEEDS)(
    'one of our probes admitted now and then while the others time out in the queue: still engine_saturated, not completions_failing (seed %i)',
    (seed) => {
      let faultAt = Infinity;
      const { v, run } = deployment(
        // The keep-alive chat gets a slot after a long wait (as the bench's vllm_saturation showed near the load's
        // end); every other completion times out in the queue.
        (r) =>
          !isCompletion(r.probe.kind) || r.start < faultAt
            ? healthy(r)
            : r.probe.kind === 'chat' && r.conn === 'keepalive'
              ? { ms: 25_000, ttftMs: 24_000 }
              : 'hang',
        (now) =>
          now < faultAt
            ? idleReading(now)
            : { running: 4, queued: 30, generatedTokensTotal: Math.floor(now / 10), finishedTotal: 100 },
        seed,
      );
      run(v.t0 + 10 * 60_000);
      faultAt = v.now;
      run(faultAt + 5 * 60_000);
      const after = states(v, faultAt);
      expect(after).toContain('degraded/engine_saturated');
      expect(after.filter((x) => x.startsWith('wedged') || x.endsWith('/completions_failing'))).toEqual([]);
    },
  );

  it.each(SEEDS)(
    'every slot held by long generations, the queue growing, tokens flowing: at most degraded/engine_saturated for 10 minutes (seed %i)',
    (seed) => {
      let faultAt = Infinity;
      const { v, run } = deployment(
        // Our completions wait behind the queue until their timeout.
        (r) => (isCompletion(r.probe.kind) && r.start >= faultAt ? 'hang' : healthy(r)),
        (now) =>
          now < faultAt
            ? idleReading(now)
            : {
                running: 4,
                queued: 28 + Math.floor((now - faultAt) / 60_000),
                // llama.cpp: the token counter moves only when a request ends; n_decode_total every step.
                generatedTokensTotal: 1000,
                decodeStepsTotal: Math.floor(now / 10),
              },
        seed,
      );
      run(v.t0 + 10 * 60_000);
      faultAt = v.now;
      run(faultAt + 10 * 60_000);
      const after = states(v, faultAt);
      expect(after.some((x) => x.startsWith('wedged'))).toBe(false);
      expect(after).toContain('degraded/engine_saturated');
      expect(v.s.state).toBe('degraded');
    },
  );

  /**
   * vLLM saturated by long generations (the bench's vllm_saturation): its /metrics times out under the load from a
   * minute in (`scrapes`: whether they keep failing), while its periodic stats line says every 10 s what it runs, waits
   * on and makes (`lines`: whether the line still reports tokens).
   */
  const scrapeFailsUnderLoad = (seed: number, lines: 'serving' | 'none') => {
    let faultAt = Infinity;
    const { v, run } = deployment(
      (r) => (isCompletion(r.probe.kind) && r.start >= faultAt ? 'hang' : healthy(r)),
      (now) =>
        now < faultAt
          ? idleReading(now)
          : now < faultAt + 60_000
            ? { running: 4, queued: 28, generatedTokensTotal: Math.floor(now / 10) }
            : undefined,
      seed,
    );
    const line = (now: number) => {
      if (now < faultAt || lines === 'none') return;
      for (const service of ['decode', 'prefill'])
        v.feed({
          kind: 'engine',
          target: v.target.name,
          service,
          source: 'log',
          time: now,
          running: 4,
          queued: 28,
          genThroughput: 120,
          progress: true,
        });
    };
    const runWithLines = (until: number) => {
      for (let t = v.now + 10_000; t <= until; t += 10_000) {
        run(t);
        line(v.now);
      }
      run(until);
    };
    runWithLines(v.t0 + 10 * 60_000);
    faultAt = v.now;
    runWithLines(faultAt + 10 * 60_000);
    return states(v, faultAt);
  };

  it.each(SEEDS)(
    'its /metrics timing out under the load while its stats line reports tokens: still degraded/engine_saturated, never wedged (seed %i)',
    (seed) => {
      const after = scrapeFailsUnderLoad(seed, 'serving');
      expect(after.filter((x) => x.startsWith('wedged'))).toEqual([]);
      expect(after).toContain('degraded/engine_saturated');
    },
  );

  /**
   * Saturated for 3 minutes (our completions wait until their timeouts), then the load drains at once: nothing waiting,
   * only our completions running, served 8 s later — or (`after: 'hang'`) new ones hanging on the drained engine.
   */
  const loadThenDrain = (seed: number, after: 'healthy' | 'hang') => {
    let faultAt = Infinity;
    let endAt = Infinity;
    const { v, run } = deployment(
      (r) => {
        const ok = healthy(r);
        if (!isCompletion(r.probe.kind) || r.start < faultAt || ok === 'hang') return ok;
        if (after === 'hang' && r.start >= endAt) return 'hang';
        if (r.start >= endAt) return ok;
        // Waiting in the queue until it drains, then admitted (its prefill behind the others'): served 8 s after
        // the drain if that is within the run's timeout.
        const served = endAt + 8_000 - r.start;
        return served < r.probe.timeout ? { ...ok, ms: served + ok.ms } : 'hang';
      },
      (now) => {
        if (now >= faultAt && now < endAt)
          return { running: 4, queued: 28, generatedTokensTotal: Math.floor(now / 10) };
        if (now < faultAt) return idleReading(now);
        // Drained: only our own completions still in flight run.
        const ours = (v.s.inflight ?? []).filter((r) =>
          isCompletion(v.target.probes.find((p) => p.name === r.probe)?.kind),
        ).length;
        return { ...idleReading(now), running: ours };
      },
      seed,
    );
    run(v.t0 + 10 * 60_000);
    faultAt = v.now;
    endAt = faultAt + 3 * 60_000 + 1_000 * seed;
    run(endAt + 3 * 60_000);
    return states(v, endAt);
  };

  it.each(SEEDS)(
    'the load draining: timeouts our probes earned waiting in it are no wedge once the queue empties (seed %i)',
    (seed) => {
      const after = loadThenDrain(seed, 'healthy');
      expect(after.filter((x) => x.startsWith('wedged'))).toEqual([]);
      expect(after.at(-1)).toBe('ok/-');
    },
  );

  it('completions that hang on the drained, idle engine are a wedge again: the test can fail', () => {
    expect(loadThenDrain(1, 'hang').some((x) => x.startsWith('wedged'))).toBe(true);
  });

  it('the same failing scrapes with no stats line at all are a wedge: the test can fail', () => {
    expect(scrapeFailsUnderLoad(1, 'none').some((x) => x.startsWith('wedged'))).toBe(true);
  });

  it('the same load with no progress at all (decode steps frozen too) is a wedge: the test can fail', () => {
    let faultAt = Infinity;
    const { v, run } = deployment(
      (r) => (isCompletion(r.probe.kind) && r.start >= faultAt ? 'hang' : healthy(r)),
      (now) =>
        now < faultAt
          ? idleReading(now)
          : { running: 4, queued: 28, generatedTokensTotal: 1000, decodeStepsTotal: 5 },
      1,
    );
    run(v.t0 + 10 * 60_000);
    faultAt = v.now;
    run(faultAt + 2 * 60_000);
    expect(states(v, faultAt)).toContain('wedged/engine_stalled');
  });

  /**
   * llama.cpp with `--parallel 1`: the one slot held by a client that never reads its stream (the server decodes on,
   * its token counter moves only when a request ends), our probes waiting for the slot.
   */
  const neverReads = (steps: boolean) => (now: number, faultAt: number) =>
    now < faultAt
      ? idleReading(now)
      : {
          running: 1,
          queued: 1,
          generatedTokensTotal: 500,
          ...(steps ? { decodeStepsTotal: Math.floor(now / 20) } : {}),
        };

  it('a slot held by a client that never reads (tokens_predicted_total still, n_decode_total moving) is no stall: degraded/engine_saturated', () => {
    let faultAt = Infinity;
    const reading = neverReads(true);
    const { v, run } = deployment(
      (r) => (isCompletion(r.probe.kind) && r.start >= faultAt ? 'hang' : healthy(r)),
      (now) => reading(now, faultAt),
      2,
    );
    run(v.t0 + 10 * 60_000);
    faultAt = v.now;
    run(faultAt + 10 * 60_000);
    const events = v.steps.filter((s) => s.at >= faultAt).flatMap((s) => s.events);
    expect(events.filter((e) => e.type === 'engine_stalled')).toEqual([]);
    expect(states(v, faultAt).some((x) => x.startsWith('wedged'))).toBe(false);
    expect(`${v.s.state}/${v.s.diagnosis}`).toBe('degraded/engine_saturated');
  });

  it('without the decode-step counter the same client reads as a stalled engine (what issue 38 saw)', () => {
    let faultAt = Infinity;
    const reading = neverReads(false);
    const { v, run } = deployment(
      (r) => (isCompletion(r.probe.kind) && r.start >= faultAt ? 'hang' : healthy(r)),
      (now) => reading(now, faultAt),
      2,
    );
    run(v.t0 + 10 * 60_000);
    faultAt = v.now;
    run(faultAt + 3 * 60_000);
    expect(states(v, faultAt)).toContain('wedged/engine_stalled');
  });
});

describe("our own probes are not the load (issue 38: the example fills llama-server's 2 slots itself)", () => {
  /**
   * From the fault on our completions take 25 s (past hangAfter, inside their timeouts) and the engine reports
   * every one of them in flight (2 slots, the rest waiting) plus `others` requests of anyone else's, tokens flowing.
   */
  const ownLoad = (others: number) => {
    let faultAt = Infinity;
    const { v, run } = deployment(
      (r) => {
        const ok = healthy(r);
        return isCompletion(r.probe.kind) && r.start >= faultAt && ok !== 'hang' ? { ...ok, ms: 25_000 } : ok;
      },
      (now) => {
        if (now < faultAt) return idleReading(now);
        const ours = (v.s.inflight ?? []).filter((r) =>
          isCompletion(v.target.probes.find((p) => p.name === r.probe)?.kind),
        ).length;
        const load = ours + others;
        return {
          running: Math.min(2, load),
          queued: Math.max(0, load - 2),
          generatedTokensTotal: Math.floor(now / 1000) * 16,
          decodeStepsTotal: Math.floor(now / 10),
        };
      },
      1,
    );
    run(v.t0 + 10 * 60_000);
    faultAt = v.now;
    run(faultAt + 10 * 60_000);
    return states(v, faultAt);
  };

  it('one of our probes waiting for a slot behind our own others is neither saturation nor a wedge', () => {
    const after = ownLoad(0);
    expect(after.filter((x) => x.startsWith('wedged'))).toEqual([]);
    expect(after.filter((x) => x.endsWith('engine_saturated'))).toEqual([]);
  });

  it('the same waits with two requests of others holding the slots are engine_saturated: the test can fail', () => {
    const after = ownLoad(2);
    expect(after.filter((x) => x.startsWith('wedged'))).toEqual([]);
    expect(after).toContain('degraded/engine_saturated');
  });
});

describe('stalls that clear by themselves (issue 41 item 2)', () => {
  /** From `at` on, the engine stops for `stallMs` every `everyMs`; a run started in a stall ends when it does. */
  const stalls = (at: () => number, stallMs: number, everyMs: number) => (r: RunInfo) => {
    const ok = healthy(r);
    if (!isCompletion(r.probe.kind) || r.start < at() || ok === 'hang') return ok;
    const into = (r.start - at()) % everyMs;
    return into < stallMs ? { ...ok, ms: stallMs - into + ok.ms } : ok;
  };

  it.each(SEEDS)(
    'three 25 s stalls a minute apart, each clearing, make degraded/stalls_recurring (seed %i)',
    (seed) => {
      let faultAt = Infinity;
      // While it stalls the engine's counters stand still and its gauges hold what it last published.
      const stalled = (now: number) => now >= faultAt && (now - faultAt) % 60_000 < 25_000;
      let last: Reading;
      const { v, run } = deployment(
        stalls(() => faultAt, 25_000, 60_000),
        (now) => (stalled(now) ? last : (last = idleReading(now))),
        seed,
      );
      run(v.t0 + 10 * 60_000);
      faultAt = v.now + 3_000 * seed;
      run(faultAt + 4 * 60_000);
      expect(states(v, faultAt).some((x) => x.endsWith('/stalls_recurring'))).toBe(true);
    },
  );

  /**
   * A loaded host: one completion in four takes up to 8 s longer because the daemon's own event loop could not run
   * (the probe reports it as loopLostMs), and from `faultAt` on (`stallMs` > 0) 14 s engine stalls a minute apart.
   */
  const loadedHost = (seed: number, stallMs: number) => {
    let faultAt = Infinity;
    let n = 0;
    const stalled = stalls(() => faultAt, stallMs, 60_000);
    const { v, run } = deployment(
      (r) => {
        const out = stallMs > 0 ? stalled(r) : healthy(r);
        if (out === 'hang' || !isCompletion(r.probe.kind) || n++ % 4 !== 0) return out;
        const lost = ((n * 7919) % 100) * 80;
        return { ...out, ms: out.ms + lost, loopLostMs: lost };
      },
      idleReading,
      seed,
    );
    run(v.t0 + 20 * 60_000);
    faultAt = v.now + 3_000 * seed;
    run(faultAt + 5 * 60_000);
    return { v, after: states(v, faultAt) };
  };

  it.each(SEEDS)(
    "on a loaded host, 14 s stalls a minute apart are still stalls_recurring: our loop's lost time is no part of the slot's latency (seed %i)",
    (seed) => {
      expect(loadedHost(seed, 14_000).after.some((x) => x.endsWith('/stalls_recurring'))).toBe(true);
    },
  );

  it("a loaded host's slow runs alone (our loop lost the time) are no episodes", () => {
    const { v, after } = loadedHost(1, 0);
    expect(v.s.progress?.episodes ?? []).toEqual([]);
    expect(after.filter((x) => !x.startsWith('ok'))).toEqual([]);
  });

  it('one stall is no recurrence, and a jittery healthy slot (0.2–2 s) has no episodes in an hour', () => {
    let faultAt = Infinity;
    let i = 0;
    const { v, run } = deployment(
      (r) => {
        const ok = healthy(r);
        if (ok === 'hang' || !isCompletion(r.probe.kind)) return ok;
        if (r.start >= faultAt && r.start < faultAt + 25_000)
          return { ...ok, ms: faultAt + 25_000 - r.start };
        return { ...ok, ms: 200 + ((i++ * 7919) % 1800) };
      },
      (now) => (now >= faultAt && now < faultAt + 25_000 ? { running: 1, queued: 0 } : idleReading(now)),
      3,
    );
    run(v.t0 + 60 * 60_000);
    expect(v.s.progress?.episodes ?? []).toEqual([]);
    faultAt = v.now;
    run(faultAt + 4 * 60_000);
    expect(states(v, faultAt)).not.toContain('degraded/stalls_recurring');
    expect(v.s.progress!.episodes.length).toBeGreaterThan(0);
  });
});

describe('requests lost with no error (issue 41 item 4)', () => {
  it.each(SEEDS)(
    'a chat request in flight while the engines report nothing running or waiting and serve other requests is requests_lost (seed %i)',
    (seed) => {
      let faultAt = Infinity;
      let n = 0;
      const { v, run } = deployment(
        (r) => (r.probe.kind === 'chat' && r.start >= faultAt && n++ % 3 === 0 ? 'hang' : healthy(r)),
        idleReading,
        seed,
      );
      run(v.t0 + 10 * 60_000);
      faultAt = v.now;
      run(faultAt + 3 * 60_000);
      const lost = v.steps.find((s) => s.at >= faultAt && s.state.diagnosis === 'requests_lost');
      expect(lost).toBeDefined();
      expect(v.s.progress!.lost[0]!.ageMs).toBeLessThan(30_000);
      expect(lost!.state.cause).toMatch(/nothing running and nothing waiting/);
    },
  );

  it.each(SEEDS)(
    'a PD decode leg whose gauges freeze at nothing while prefill still makes tokens is the engine stalled, not a lost request (decode_stall, seed %i)',
    (seed) => {
      let faultAt = Infinity;
      let frozen: EngineSignal | undefined;
      const v = new VirtualDeployment(
        exampleTarget(),
        (r) =>
          (isCompletion(r.probe.kind) || r.probe.kind === 'serverinfo') && r.start >= faultAt
            ? 'hang'
            : healthy(r),
        seed,
      );
      const run = (until: number) => {
        for (let t = v.now + SCRAPE_MS; t <= until; t += SCRAPE_MS) {
          v.runUntil(t);
          for (const service of ['decode', 'prefill']) {
            const live = {
              kind: 'engine' as const,
              target: v.target.name,
              service,
              source: 'metrics' as const,
              time: v.now,
              scrapeOk: true,
              ...idleReading(v.now),
            } as EngineSignal;
            // Decode's scheduler stopped: the same reading from the fault on. Prefill keeps computing first tokens.
            if (service === 'decode' && v.now >= faultAt) v.feed({ ...(frozen ??= live), time: v.now });
            else v.feed(live);
          }
        }
        v.runUntil(until);
      };
      run(v.t0 + 10 * 60_000);
      expect(v.s.state).toBe('ok');
      faultAt = v.now;
      run(faultAt + 3 * 60_000);
      expect(v.s.progress?.lost ?? []).toEqual([]);
      expect(states(v, faultAt)).not.toContain('degraded/requests_lost');
      expect(states(v, faultAt)).not.toContain('wedged/requests_lost');
      expect(states(v, faultAt)).toContain('wedged/engine_stalled');
    },
  );

  it('the same hang while the engines report our request waiting is no lost request', () => {
    let faultAt = Infinity;
    let n = 0;
    const { v, run } = deployment(
      (r) => (r.probe.kind === 'chat' && r.start >= faultAt && n++ % 3 === 0 ? 'hang' : healthy(r)),
      (now) => ({ ...idleReading(now), running: 0, queued: now >= faultAt ? 1 : 0 }),
      1,
    );
    run(v.t0 + 10 * 60_000);
    faultAt = v.now;
    run(faultAt + 3 * 60_000);
    expect(v.s.progress?.lost ?? []).toEqual([]);
    expect(states(v, faultAt)).not.toContain('degraded/requests_lost');
  });
});
