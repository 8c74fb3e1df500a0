// Issue 41 items 3 and 8 on the virtual clock: crawls judged across probe runs, a 2× slowdown, a crawl from
// start-up, objectives from the config or the first healthy window, baselines kept across restarts and never
// learned while an objective is missed, queues that never admit, and diagnoses that hold while their evidence does.
import { describe, expect, it } from 'vitest';
import { detectSchema } from '../../src/config/schema.js';
import type { ClassifierConfig } from '../../src/core/memory.js';
import { baselineOf } from '../../src/core/reduce/objectives.js';
import { heldVerdict } from '../../src/core/reduce/incident.js';
import { initialState } from '../../src/core/memory.js';
import { Run } from './run.js';

const config = (
  detect: Record<string, unknown> = {},
  objectives?: ClassifierConfig['objectives'],
): ClassifierConfig => ({
  hops: ['router'],
  probes: { chat: { kind: 'chat' }, health: { kind: 'health' } },
  detect: detectSchema.parse({ stallAfter: '20s', hangAfter: '20s', ...detect }),
  ...(objectives !== undefined ? { objectives } : {}),
});

/** A vLLM engine scraped every `every` ms: its inter-token latency histogram, running gauge and token counter. */
class Vllm {
  itl = { sum: 0, count: 0 };
  tokens = 0;
  finished = 0;
  queue = { sum: 0, count: 0 };
  constructor(
    readonly r: Run,
    readonly service = 'server',
  ) {}
  /** `n` tokens came out `itlMs` apart since the last scrape; `running` at the scrape. */
  scrape(o: { n: number; itlMs: number; running: number; queued?: number; every?: number }) {
    this.itl.count += o.n;
    this.itl.sum += (o.n * o.itlMs) / 1000;
    this.tokens += o.n;
    return this.r.engine(
      {
        service: this.service,
        running: o.running,
        queued: o.queued ?? 0,
        interTokenLatencySumSeconds: this.itl.sum,
        interTokenLatencyCount: this.itl.count,
        generatedTokensTotal: this.tokens,
        finishedTotal: this.finished,
        queueTimeSumSeconds: this.queue.sum,
        queueTimeCount: this.queue.count,
      },
      o.every ?? 5000,
    );
  }
  /** `k` requests finished having waited `waitMs` each in the queue (vLLM observes at finish). */
  finish(k: number, waitMs: number) {
    this.finished += k;
    this.queue.count += k;
    this.queue.sum += (k * waitMs) / 1000;
  }
}

describe('crawls across probe runs (issue 41)', () => {
  it('an engine idle but for our probes: a 50× crawl after a healthy period reads engine_crawling, not completions_failing', () => {
    const r = new Run(config({ stallAfter: '60s', hangAfter: '20s' }));
    const v = new Vllm(r);
    r.round();
    // Healthy: every other scrape saw a probe's 20 tokens, 10 ms apart; nothing is running at most scrapes.
    for (let i = 0; i < 16; i++) {
      v.scrape({ n: i % 2 === 0 ? 20 : 0, itlMs: 10, running: 0 });
      if (i % 3 === 0) r.round();
    }
    expect(r.verdict).toBe('ok/null');
    // 50×: each probe now makes a few tokens 500 ms apart before its timeout; between probes nothing runs. Before
    // issue 41 every idle scrape restarted the crawl clock, so it never ran stallAfter.
    for (let i = 0; i < 30; i++) {
      v.scrape({ n: i % 3 === 0 ? 6 : 0, itlMs: 500, running: i % 3 === 0 ? 1 : 0 });
      if (i % 3 === 0) r.round('timeout');
    }
    expect(r.verdict).toBe('wedged/engine_crawling');
    expect(r.s.cause).toMatch(/^server makes 2 % of its own tokens per running request/);
  });

  it('the clock is let go when no sample below came for stallAfter (the engine went idle), and ended by one at the baseline', () => {
    const r = new Run(config({ stallAfter: '20s' }));
    const v = new Vllm(r);
    r.round();
    for (let i = 0; i < 8; i++) v.scrape({ n: 100, itlMs: 10, running: 1 });
    v.scrape({ n: 5, itlMs: 500, running: 1 });
    expect(r.s.engines.server!.crawl!.belowSince).toBeDefined();
    // Nothing for 25 s: no evidence either way, and more than stallAfter of it.
    for (let i = 0; i < 5; i++) v.scrape({ n: 0, itlMs: 0, running: 0 });
    r.round();
    expect(r.s.engines.server!.crawl!.belowSince).toBeUndefined();
    expect(r.verdict).toBe('ok/null');
    v.scrape({ n: 5, itlMs: 500, running: 1 });
    expect(r.s.engines.server!.crawl!.belowSince).toBeDefined();
    v.scrape({ n: 100, itlMs: 10, running: 1 });
    expect(r.s.engines.server!.crawl!.belowSince).toBeUndefined();
  });
});

describe('objectives beside baselines (issue 41)', () => {
  it('a uniform 2× slowdown misses the learned objective → degraded/engine_slow; it never joins the baseline', () => {
    const r = new Run(config({ stallAfter: '20s' }));
    const v = new Vllm(r);
    r.round();
    for (let i = 0; i < 8; i++) {
      v.scrape({ n: 100, itlMs: 10, running: 1 });
      r.round();
    }
    const o = r.s.engines.server!.objectives!;
    expect(o.itlFrom).toBe('learned');
    expect(o.itlMs).toBeCloseTo(15, 5);
    const samples = r.s.engines.server!.crawl!.samples;
    // Judged after stallAfter and never under SLOW_MIN_MS (30 s): 5.4 s a sample.
    for (let i = 0; i < 8; i++) {
      v.scrape({ n: 50, itlMs: 20, running: 1 });
      r.round();
    }
    expect(r.verdict).toBe('degraded/engine_slow');
    expect(r.s.cause).toMatch(
      /^server: inter-token latency 20 ms over its objective, learned from its first healthy window \(15 ms\) for 3\d s$/,
    );
    expect(r.s.engines.server!.crawl!.samples).toBe(samples);
    expect(r.s.engines.server!.crawl!.baseline).toBeCloseTo(100, 5);
    for (let i = 0; i < 3; i++) {
      v.scrape({ n: 100, itlMs: 10, running: 1 });
      r.round();
    }
    expect(r.verdict).toBe('ok/null');
  });

  it('a crawl present from start-up is never learned: engine_slow against the ceiling, no baseline', () => {
    const r = new Run(config({ stallAfter: '20s' }));
    const v = new Vllm(r);
    r.round();
    for (let i = 0; i < 10; i++) {
      v.scrape({ n: 10, itlMs: 500, running: 1 });
      r.round();
    }
    expect(r.verdict).toBe('degraded/engine_slow');
    expect(r.s.cause).toContain('over the 250 ms ceiling: no healthy window since start-up (250 ms)');
    expect(r.s.engines.server!.crawl!.baseline).toBeUndefined();
    expect(r.s.engines.server!.objectives!.itlFrom).toBe('ceiling');
  });

  it('a configured objective wins: an engine slow by design (500 ms) stays ok under a 600 ms objective', () => {
    const r = new Run(config({ stallAfter: '20s' }, { interTokenLatency: 600 }));
    const v = new Vllm(r);
    r.round();
    for (let i = 0; i < 10; i++) {
      v.scrape({ n: 10, itlMs: 500, running: 1 });
      r.round();
    }
    expect(r.transitions()).toEqual(['ok/-']);
    expect(r.s.engines.server!.objectives).toMatchObject({ itlMs: 600, itlFrom: 'config' });
    // Its baseline is its own normal: a crawl from there is judged.
    expect(r.s.engines.server!.crawl!.baseline).toBeCloseTo(2, 5);
  });

  it('a restart keeps the baseline (stateDir): a crawl present when the daemon starts is judged against the past', () => {
    const before = new Run(config({ stallAfter: '20s' }));
    const v0 = new Vllm(before);
    before.round();
    for (let i = 0; i < 8; i++) v0.scrape({ n: 100, itlMs: 10, running: 1 });
    const stored = baselineOf(before.s.engines.server!, before.now)!;
    expect(stored).toMatchObject({ itlMs: 15, crawlBaseline: 100 });
    // A new daemon; the engine crawls (30×) from its first scrape on.
    const r = new Run(config({ stallAfter: '20s' }));
    r.s = initialState('t', r.now);
    r.s.baselineSeeds = { server: JSON.parse(JSON.stringify(stored)) as typeof stored };
    const v = new Vllm(r);
    r.round();
    for (let i = 0; i < 8; i++) {
      v.scrape({ n: 10, itlMs: 300, running: 1 });
      r.round();
    }
    expect(r.verdict).toBe('degraded/engine_crawling');
    expect(r.s.baselineSeeds).toEqual({});
    // Without the stored baseline the same crawl is only over the ceiling.
    const fresh = new Run(config({ stallAfter: '20s' }));
    const vf = new Vllm(fresh);
    fresh.round();
    for (let i = 0; i < 8; i++) {
      vf.scrape({ n: 10, itlMs: 300, running: 1 });
      fresh.round();
    }
    expect(fresh.verdict).toBe('degraded/engine_slow');
  });

  it('nothing is learned while the queue misses its objective (a starving queue is not the normal)', () => {
    const r = new Run(config({ stallAfter: '20s' }, { queueTime: 1000 }));
    const v = new Vllm(r);
    r.round();
    // Every request waits 5 s in the queue: the queue-time objective (1 s) is missed, so the healthy-looking
    // token rate is learned neither as the objective nor as the crawl baseline.
    for (let i = 0; i < 8; i++) {
      v.finish(1, 5000);
      v.scrape({ n: 100, itlMs: 10, running: 1, queued: 1 });
    }
    expect(r.s.engines.server!.objectives!.itlFrom).toBe('ceiling');
    expect(r.s.engines.server!.crawl!.baseline).toBeUndefined();
    for (let i = 0; i < 6; i++) {
      v.finish(1, 100);
      v.scrape({ n: 100, itlMs: 10, running: 1, queued: 0 });
    }
    expect(r.s.engines.server!.objectives!.itlFrom).toBe('learned');
    expect(r.s.engines.server!.crawl!.baseline).toBeCloseTo(100, 5);
  });
});

describe("our probes' own rate, where the engine gives none (issue 38: a 10× crawl on llama.cpp stayed ok)", () => {
  const round = (r: Run, tps: number, advance = 15_000) => {
    for (const conn of ['fresh', 'keepalive'] as const)
      r.probe({ endpoint: 'router', conn, reusedConnection: conn === 'keepalive', tokensPerSecond: tps });
    r.feed({ kind: 'tick' }, advance);
  };

  it('chat probes streaming 10× slower than their first healthy window → degraded/engine_slow; back → ok', () => {
    const r = new Run(config({ stallAfter: '60s' }));
    for (let i = 0; i < 6; i++) round(r, 80);
    expect(r.s.probeObjective).toMatchObject({ itlFrom: 'learned' });
    // 1.5 × 12.5 ms is under the probes' 20 ms floor (their own timing's jitter on a fast model).
    expect(r.s.probeObjective!.itlMs).toBe(20);
    // 15 s a round: the clock has run 45 s after three slow rounds, past stallAfter after the fifth.
    for (let i = 0; i < 3; i++) round(r, 8);
    expect(r.s.state).toBe('ok');
    for (let i = 0; i < 2; i++) round(r, 8);
    expect(r.verdict).toBe('degraded/engine_slow');
    expect(r.s.cause).toMatch(
      /^chat probes stream a token every 125 ms, over its objective, learned from its quietest healthy runs \(20 ms\) for \d+ s$/,
    );
    for (let i = 0; i < 2; i++) round(r, 80);
    expect(r.s.state).toBe('ok');
  });

  it('a crawl in steps: a run now and then that came whole inside a fast step does not stop the clock', () => {
    const r = new Run(config({ stallAfter: '60s' }));
    for (let i = 0; i < 6; i++) round(r, 80);
    // Issue 38's duty-cycle crawl on the real llama.cpp server: most runs 10× slower, one in six at full speed (its 8
    // tokens inside one run window). One such run used to stop the clock: degraded for 60 s, then ok mid-crawl.
    for (let i = 0; i < 18; i++) {
      r.probe({ endpoint: 'router', conn: 'fresh', reusedConnection: false, tokensPerSecond: 8 });
      const lucky = i % 3 === 2;
      r.probe({
        endpoint: 'router',
        conn: 'keepalive',
        reusedConnection: true,
        tokensPerSecond: lucky ? 80 : 8,
      });
      r.feed({ kind: 'tick' }, 15_000);
    }
    expect(r.transitions()).toEqual(['ok/-', 'degraded/engine_slow']);
    // Back to full speed: ok within two rounds.
    for (let i = 0; i < 2; i++) round(r, 80);
    expect(r.s.state).toBe('ok');
  });

  it('an engine idle but for our probes, whose rate shows only once they crawl, does not speak for the crawl', () => {
    const r = new Run(config({ stallAfter: '60s' }));
    for (let i = 0; i < 6; i++) round(r, 80);
    // llama.cpp behind the example: idle between probes, so no rate of its own while healthy. Crawling, a probe
    // lasts long enough for the scrape to see it running: the engine's first rates are the crawl's (60 ms a token),
    // learned as its normal after 5, while our probes' objective came from their healthy window.
    const v = new Vllm(r);
    for (let i = 0; i < 10; i++) {
      v.scrape({ n: 15, itlMs: 60, running: 1, every: 1000 });
      round(r, 16, 14_000);
    }
    expect(r.s.engines.server!.objectives!.itlFrom).toBe('learned');
    expect(r.transitions()).toEqual(['ok/-', 'degraded/engine_slow']);
    expect(r.s.cause).toMatch(/^chat probes stream a token every 63 ms/);
  });

  it('a rate of counters over a scrape interval (llama.cpp: decode steps, no latency histogram) never silences the probes', () => {
    const r = new Run(config({ stallAfter: '60s' }));
    // Healthy: scrapes that caught our probes running read 40 steps a second a request, learned (5 samples) first.
    let steps = 0;
    const scrape = (perSecond: number) => {
      steps += perSecond;
      r.engine({ service: 'server', running: 1, queued: 0, generatedTokensTotal: steps }, 1000);
    };
    for (let i = 0; i < 7; i++) scrape(40);
    for (let i = 0; i < 6; i++) round(r, 80);
    expect(r.s.engines.server!.objectives!.itlFrom).toBe('learned');
    // Crawling: every chat run 10× slower; the counters still read within the engine's objective.
    for (let i = 0; i < 8; i++) {
      scrape(40 * 15); // 40 a second over the round's 15 s
      round(r, 8, 14_000);
    }
    expect(r.transitions()).toEqual(['ok/-', 'degraded/engine_slow']);
    expect(r.s.cause).toMatch(/^chat probes stream a token every 125 ms/);
  });

  it("a fast model's jitter is not a slowdown: healthy runs a few ms over 1.5× a 5 ms window stay ok", () => {
    const r = new Run(config({ stallAfter: '60s' }));
    for (let i = 0; i < 6; i++) round(r, 200);
    // The real fixture on a loaded machine: learned from 5 ms, then healthy runs at 8 ms a token for minutes.
    for (let i = 0; i < 12; i++) round(r, 125);
    expect(r.transitions()).toEqual(['ok/-']);
    // 10× slower still reads degraded.
    for (let i = 0; i < 6; i++) round(r, 20);
    expect(r.verdict).toBe('degraded/engine_slow');
  });

  it('a learning window on a loaded host is not the normal: the quiet runs after it re-learn the objective downward', () => {
    // Issue 38, replayed from bench/real-llama.mjs --scenarios crawl --learn-load 4 on main dd0ba68 (load 10–13):
    // our chat runs' inter-token latencies (ms) from the start, 4 busy loops beside the server, then the 10× crawl on
    // a quieter host. 1.5× the mean of the first five runs' rolling medians was 62 ms, over the crawl's median of
    // 56 ms: ok for the whole crawl (the same miss as the 1 in 2 runs of the last session).
    const learning = [59.3, 25.4, 27.4, 51.5, 46.1, 18.9, 15.5, 22.3, 11.5, 12.5, 12.7, 18.8, 29.3, 8.0];
    const crawl = [56.4, 29.0, 92.9, 47.0, 61.2, 38.5, 70.3, 56.9];
    const r = new Run(config({ stallAfter: '60s' }));
    const run = (itlMs: number, i: number) => {
      const conn = i % 2 === 0 ? 'fresh' : 'keepalive';
      r.probe({
        endpoint: 'router',
        conn,
        reusedConnection: conn === 'keepalive',
        tokensPerSecond: 1000 / itlMs,
      });
      r.feed({ kind: 'tick' }, 7_500);
    };
    learning.forEach(run);
    expect(r.s.probeObjective).toMatchObject({ itlFrom: 'learned', itlMs: 20 });
    for (let i = 0; i < 3; i++) crawl.forEach(run);
    expect(r.transitions()).toEqual(['ok/-', 'degraded/engine_slow']);
    expect(r.s.cause).toMatch(
      /^chat probes stream a token every \d+ ms, over its objective, learned from its quietest healthy runs \(20 ms\)/,
    );
    // The crawl taught nothing: back at full speed, ok, and the objective never rose.
    for (let i = 0; i < 2; i++) round(r, 200);
    expect(r.s.state).toBe('ok');
    expect(r.s.probeObjective!.itlMs).toBe(20);
  });

  it('one slow run among the first five moves a median, not the objective: 1.5× a mean would be over a 10× crawl', () => {
    const r = new Run(config({ stallAfter: '60s' }));
    // The first run after start-up pays for the model's first pages (200 ms a token), the rest stream at 5 ms.
    const first = [200, 5, 5, 5, 5];
    first.forEach((itl, i) => {
      const conn = i % 2 === 0 ? 'fresh' : 'keepalive';
      r.probe({
        endpoint: 'router',
        conn,
        reusedConnection: conn === 'keepalive',
        tokensPerSecond: 1000 / itl,
      });
      r.feed({ kind: 'tick' }, 7_500);
    });
    expect(r.s.probeObjective).toMatchObject({ itlFrom: 'learned', itlMs: 20 });
    for (let i = 0; i < 6; i++) round(r, 20);
    expect(r.verdict).toBe('degraded/engine_slow');
  });

  it('the objective is never re-learned upward: a host loaded after a quiet window still reads a 10× crawl', () => {
    const r = new Run(config({ stallAfter: '60s' }));
    for (let i = 0; i < 6; i++) round(r, 200);
    expect(r.s.probeObjective!.itlMs).toBe(20);
    // Loaded for minutes at 12 ms a token (within the objective): nothing moves it up.
    for (let i = 0; i < 12; i++) round(r, 1000 / 12);
    expect(r.s.probeObjective!.itlMs).toBe(20);
    for (let i = 0; i < 6; i++) round(r, 20);
    expect(r.verdict).toBe('degraded/engine_slow');
  });

  it('one slow run among fast ones starts nothing that lasts; an engine with its own rate is judged on that instead', () => {
    const r = new Run(config({ stallAfter: '60s' }));
    for (let i = 0; i < 6; i++) round(r, 80);
    for (let i = 0; i < 12; i++) round(r, i % 3 === 0 ? 8 : 80);
    expect(r.transitions()).toEqual(['ok/-']);
    // The engine reports its own rate (healthy): the probes' slowness is not named from them.
    const v = new Vllm(r);
    for (let i = 0; i < 8; i++) v.scrape({ n: 100, itlMs: 10, running: 1, every: 1000 });
    for (let i = 0; i < 8; i++) {
      v.scrape({ n: 100, itlMs: 10, running: 1, every: 1000 });
      round(r, 8);
    }
    expect(r.diagnoses()).not.toContain('engine_slow');
  });
});

describe("busy is not wedged: our probes' objective beside others' work (issue 41 item 9, issue 38)", () => {
  const round = (r: Run, tps: number, advance = 14_000) => {
    for (const conn of ['fresh', 'keepalive'] as const)
      r.probe({ endpoint: 'router', conn, reusedConnection: conn === 'keepalive', tokensPerSecond: tps });
    r.feed({ kind: 'tick' }, advance);
  };
  /** llama.cpp's gauges (no token rate): `running` slots busy at the scrape, ours among them. */
  const scrape = (r: Run, running: number) => r.engine({ service: 'server', running, queued: 0 }, 1000);
  /** Night: only our probe runs (the scrape sees it) at 12.5 ms a token; the objective is the 20 ms floor. */
  const night = () => {
    const r = new Run(config({ stallAfter: '60s' }));
    for (let i = 0; i < 8; i++) {
      scrape(r, 1);
      round(r, 80);
    }
    expect(r.s.probeObjective).toMatchObject({ itlFrom: 'learned', itlMs: 20 });
    return r;
  };

  it('a server that serves only our probes by night and its parallel slots by day: busy periods read no engine_slow', () => {
    const r = night();
    // Day: 4 of others' requests batched beside ours, our probes at 40 ms a token for 5 minutes.
    for (let i = 0; i < 20; i++) {
      scrape(r, 5);
      round(r, 25);
    }
    expect(r.diagnoses()).not.toContain('engine_slow');
    expect(r.transitions()).toEqual(['ok/-']);
    // The day taught nothing either: the objective is the night's.
    expect(r.s.probeObjective).toMatchObject({ itlFrom: 'learned', itlMs: 20 });
    // Night again, and the engine crawls 10× with nothing of others' beside it: engine_slow as before (issue 38).
    for (let i = 0; i < 6; i++) {
      scrape(r, 1);
      round(r, 8);
    }
    expect(r.transitions()).toEqual(['ok/-', 'degraded/engine_slow']);
  });

  it("a run that overlapped others' work is no sample, though the gauges after it show none (the real saturation)", () => {
    // Issue 38, the real llama-server saturated by back-to-back long generations on both slots: our chat run got a
    // slot as one generation ended and streamed batched beside the other; by the next scrape that one had ended
    // too. Judged by the gauges after it, the run read "alone", 23 ms a token against the 20 ms learned alone, and
    // engine_slow held for minutes on a healthy, busy engine.
    const r = night();
    for (let i = 0; i < 20; i++) {
      const start = r.now + 500;
      scrape(r, 3); // our two runs and another's, while they stream
      scrape(r, 0); // both ended
      for (const conn of ['fresh', 'keepalive'] as const)
        r.probe({
          endpoint: 'router',
          conn,
          reusedConnection: conn === 'keepalive',
          start,
          durationMs: 1200,
          tokensPerSecond: 25,
        });
      r.feed({ kind: 'tick' }, 12_000);
    }
    expect(r.diagnoses()).not.toContain('engine_slow');
    expect(r.transitions()).toEqual(['ok/-']);
    expect(r.s.probeObjective).toMatchObject({ itlFrom: 'learned', itlMs: 20 });
  });

  it('a daemon started by day learns nothing from its busy runs: the first quiet window is the objective', () => {
    const r = new Run(config({ stallAfter: '60s' }));
    for (let i = 0; i < 8; i++) {
      scrape(r, 5);
      round(r, 25);
    }
    expect(r.s.probeObjective?.itlFrom).toBe('ceiling');
    for (let i = 0; i < 4; i++) {
      scrape(r, 1);
      round(r, 80);
    }
    expect(r.s.probeObjective).toMatchObject({ itlFrom: 'learned', itlMs: 20 });
    expect(r.transitions()).toEqual(['ok/-']);
  });
});

describe('queue_starved (issue 41)', () => {
  it('queued work never admitted while other requests finish and tokens flow → degraded, then wedged/queue_starved as our probe hangs', () => {
    const r = new Run(config({ stallAfter: '60s', hangAfter: '20s' }));
    const v = new Vllm(r);
    r.round();
    for (let i = 0; i < 6; i++) {
      v.finish(1, 50);
      v.scrape({ n: 100, itlMs: 10, running: 2 });
    }
    expect(r.s.engines.server!.objectives).toMatchObject({ queueFrom: 'learned', queueMs: 2000 });
    // Two requests queue and stay queued; the running ones finish with no wait (they were admitted before).
    for (let i = 0; i < 3; i++) {
      v.finish(1, 0);
      v.scrape({ n: 100, itlMs: 10, running: 2, queued: 2 });
      r.round();
    }
    expect(r.verdict).toBe('ok/null');
    for (let i = 0; i < 3; i++) {
      v.finish(1, 0);
      v.scrape({ n: 100, itlMs: 10, running: 2, queued: 2 });
      r.round();
    }
    expect(r.verdict).toBe('degraded/queue_starved');
    expect(r.s.cause).toMatch(
      /^server holds 2 queued request\(s\) for 2\d s while \d finished and tokens moved, and what left its queue waited 0 ms on average \(its queue-time objective 2000 ms\): the queue does not admit$/,
    );
    // Our probes wait in the same queue: they time out.
    for (let i = 0; i < 3; i++) {
      v.finish(1, 0);
      v.scrape({ n: 100, itlMs: 10, running: 2, queued: 3 });
      r.round('timeout');
    }
    expect(r.verdict).toBe('wedged/queue_starved');
    // Admitted again: the queue drains.
    v.finish(3, 30_000);
    v.scrape({ n: 100, itlMs: 10, running: 2, queued: 0 });
    expect(r.s.engines.server!.objectives!.starved).toBe(false);
    // Back to ok once the probes' own window (3 timeouts in the last 10 runs) has flushed.
    for (let i = 0; i < 10; i++) r.round();
    expect(r.s.state).toBe('ok');
  });

  it('a saturated engine admits what it queued as requests finish: busy, not starved', () => {
    const r = new Run(config({ stallAfter: '60s', hangAfter: '20s' }));
    const v = new Vllm(r);
    r.round();
    for (let i = 0; i < 6; i++) {
      v.finish(1, 50);
      v.scrape({ n: 100, itlMs: 10, running: 2 });
    }
    // Every slot held, 8 queued for 2 minutes; each request that finishes waited 12 s in the queue.
    for (let i = 0; i < 24; i++) {
      v.finish(1, 12_000);
      v.scrape({ n: 100, itlMs: 10, running: 2, queued: 8 });
      r.round();
    }
    expect(r.s.engines.server!.objectives!.starved).toBe(false);
    expect(r.diagnoses()).not.toContain('queue_starved');
  });

  it('the batch running when the queue began to hold finishes first with no wait (vLLM observes it at finish): still busy, not starved', () => {
    const r = new Run(config({ stallAfter: '60s', hangAfter: '20s' }));
    const v = new Vllm(r);
    r.round();
    for (let i = 0; i < 6; i++) {
      v.finish(1, 50);
      v.scrape({ n: 100, itlMs: 10, running: 2 });
    }
    // bench:saturation: 8 slots filled at once, 24 more queued. The 8 admitted before the queue held finish over
    // the first 40 s with no wait; each one after them waited 35 s.
    for (let i = 0; i < 24; i++) {
      v.finish(1, i < 8 ? 0 : 35_000);
      v.scrape({ n: 100, itlMs: 10, running: 8, queued: 24 });
      r.round();
    }
    expect(r.s.engines.server!.objectives!.starved).toBe(false);
    expect(r.diagnoses()).not.toContain('queue_starved');
  });

  it('a queue with nothing finishing and no tokens is no starvation (a stall is its own diagnosis)', () => {
    const r = new Run(config({ stallAfter: '60s', hangAfter: '20s' }));
    const v = new Vllm(r);
    r.round();
    for (let i = 0; i < 6; i++) {
      v.finish(1, 50);
      v.scrape({ n: 100, itlMs: 10, running: 2 });
    }
    for (let i = 0; i < 8; i++) {
      v.scrape({ n: 0, itlMs: 0, running: 2, queued: 2 });
      r.round();
    }
    expect(r.s.engines.server!.objectives!.starved).toBe(false);
  });
});

describe('a diagnosis holds while its evidence does (issue 41 item 8)', () => {
  it('kv_transfer_failing holds through gaps between failures while a partial rate holds, and lets go once it stops', () => {
    const r = new Run(config({ failureCount: 3, failureWindow: '60s' }));
    r.round();
    let failed = 0;
    const scrape = (advance: number, fails = 0) => {
      failed += fails;
      r.engine({ service: 'decode', kvTransferFailedTotal: failed, running: 0 }, advance);
      r.round();
    };
    scrape(1000);
    // Three failures in 20 s name it.
    for (let i = 0; i < 3; i++) scrape(7000, 1);
    expect(r.verdict).toBe('degraded/kv_transfer_failing');
    // A 30 % rate at this traffic: a failure every 20–40 s. Before, 15 s with none let it go.
    const gaps = [35, 20, 40, 25, 30, 38, 22];
    for (const g of gaps) {
      for (let t = 0; t < g; t += 5) scrape(5000);
      scrape(100, 1);
      expect(r.s.diagnosis).toBe('kv_transfer_failing');
    }
    expect(r.transitions()).toEqual(['ok/-', 'degraded/kv_transfer_failing']);
    // The path is fixed: it lets go one failureWindow after the last failure.
    for (let t = 0; t < 70; t += 5) scrape(5000);
    expect(r.s.state).toBe('ok');
  });

  it('a critical line confirmed after the target went down does not name the death', () => {
    const s = initialState('t', 0);
    s.state = 'down';
    s.since = 10_000;
    s.incident = {
      since: 5_000,
      diagnosis: 'connection_refused',
      downSince: 10_000,
      seen: [
        { diagnosis: 'connection_refused', evidence: 'failing', rank: 0, cause: 'refused', at: 10_000 },
        {
          diagnosis: 'log:vllm_engine_core_fatal',
          evidence: 'signature',
          rank: 3,
          cause: 'the line',
          at: 12_000,
        },
      ],
    };
    const v = {
      state: 'down' as const,
      diagnosis: 'connection_refused' as const,
      cause: 'port refuses',
      clean: false,
    };
    expect(heldVerdict(s, v, 13_000).diagnosis).toBe('connection_refused');
    // The same line from before the target went down explains it.
    s.incident.seen[1]!.at = 9_000;
    expect(heldVerdict(s, v, 13_000).diagnosis).toBe('log:vllm_engine_core_fatal');
  });
});
