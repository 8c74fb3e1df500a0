// The classifier on the signals issue 26 makes it read: the engine's own failure counters, a crawl against the
// engine's own baseline, a sleeping engine, the router's oldest in-flight request, a half-failed PD pair.
import { describe, expect, it } from 'vitest';
import { detectSchema } from '../../src/config/schema.js';
import type { ClassifierConfig } from '../../src/core/memory.js';
import { Run } from './run.js';

const config = (detect: Record<string, unknown> = {}): ClassifierConfig => ({
  hops: ['router'],
  probes: { chat: { kind: 'chat' }, health: { kind: 'health' } },
  detect: detectSchema.parse({ stallAfter: '20s', hangAfter: '20s', ...detect }),
});

describe('failure counters are evidence', () => {
  it('KV transfers failing on the engine while completions pass → degraded/kv_transfer_failing; they fail too → wedged', () => {
    const r = new Run(config({ failureCount: 3, failureWindow: '60s' }));
    r.round();
    r.engine({ service: 'server', kvTransferFailedTotal: 10, running: 1, generatedTokensTotal: 1 });
    r.round();
    // One failure a scrape: the third within the window names it.
    for (let i = 1; i <= 3; i++) {
      r.engine({ service: 'server', kvTransferFailedTotal: 10 + i, running: 1, generatedTokensTotal: 1 + i });
      r.round();
    }
    expect(r.verdict).toBe('degraded/kv_transfer_failing');
    expect(r.s.cause).toBe('server: 3 KV transfers failed within 60 s (its own counters)');
    // The transfers fail outright: completions fail, and the counter still says why.
    r.engine({ service: 'server', kvTransferFailedTotal: 20, running: 1, generatedTokensTotal: 9 });
    r.round('timeout');
    r.round('timeout');
    expect(r.verdict).toBe('wedged/kv_transfer_failing');
    expect(r.s.cause).toContain('completions fail too');
  });

  it('expired KV counts with failed transfers; increases older than failureWindow are forgotten; a restart is no increase storm', () => {
    const r = new Run(config({ failureCount: 3, failureWindow: '10s' }));
    r.round();
    r.engine({ service: 'server', kvTransferFailedTotal: 0, kvExpiredTotal: 0 });
    r.engine({ service: 'server', kvTransferFailedTotal: 1, kvExpiredTotal: 1 }, 20_000);
    r.round();
    expect(r.s.state).toBe('ok');
    r.engine({ service: 'server', kvTransferFailedTotal: 2, kvExpiredTotal: 1 }, 1000);
    r.round();
    expect(r.verdict).toBe('degraded/kv_transfer_failing');
    expect(r.s.cause).toBe(
      "server: 2 KV transfers failed and 1 requests' KV expired within 10 s (its own counters)",
    );
    // Quiet for longer than the window: recovered.
    r.engine({ service: 'server', kvTransferFailedTotal: 2, kvExpiredTotal: 1 }, 11_000);
    r.round();
    r.round();
    expect(r.s.state).toBe('ok');
  });

  it("aborts the engine counted beyond our own timed-out probes' are an abort storm; our own alone are not", () => {
    const r = new Run(config({ abortStormCount: 3, failureWindow: '60s' }));
    r.round();
    r.engine({ service: 'server', abortedTotal: 0 });
    // Two of our runs time out now and then (each aborted at the engine): the counter's 2 are ours.
    r.probe({ endpoint: 'router', result: 'timeout', conn: 'fresh' });
    r.round();
    r.probe({ endpoint: 'router', result: 'timeout', conn: 'keepalive' });
    r.round();
    r.engine({ service: 'server', abortedTotal: 2 });
    r.round();
    expect(r.transitions()).toEqual(['ok/-']);
    r.engine({ service: 'server', abortedTotal: 7 });
    r.round();
    expect(r.verdict).toBe('degraded/abort_storm');
    expect(r.s.cause).toBe("server counted 5 aborted requests within 60 s beyond our own probes' 2");
  });
});

describe("crawl against the engine's own baseline", () => {
  /** A vLLM-like engine: a token counter that moves every scrape. */
  const tokens = (r: Run, perReq: number, running: number, seconds: number, total: { n: number }) => {
    for (let i = 0; i < seconds; i++) {
      total.n += perReq * running;
      r.engine({ service: 'server', running, generatedTokensTotal: total.n, finishedTotal: 5 });
      r.round();
    }
  };

  it('tokens per running request 14× below the baseline for stallAfter with requests running → degraded/engine_crawling; back → ok', () => {
    const r = new Run(config({ stallAfter: '20s' }));
    r.round();
    const total = { n: 0 };
    tokens(r, 50, 4, 10, total);
    expect(r.s.state).toBe('ok');
    // 50 → 3.5 tokens/s per request: the counter still moves (no stall), at 7 % of its own baseline. A sample
    // is 1.2 s (a scrape and a round of probes): 15 of them are under stallAfter, 18 past it.
    tokens(r, 3.5, 4, 15, total);
    expect(r.s.state).toBe('ok');
    tokens(r, 3.5, 4, 3, total);
    expect(r.verdict).toBe('degraded/engine_crawling');
    expect(r.s.cause).toMatch(
      /^server makes 7 % of its own tokens per running request \(4 running\) for 2\d s$/,
    );
    expect(r.steps.flatMap((s) => s.events).filter((e) => e.type === 'engine_crawling')).toHaveLength(1);
    expect(r.s.engines.server!.stalled).toBe(false);
    tokens(r, 50, 4, 3, total);
    expect(r.s.state).toBe('ok');
  });

  it('a crawl with completions failing is wedged/engine_crawling, not completions_failing', () => {
    const r = new Run(config({ stallAfter: '20s' }));
    r.round();
    const total = { n: 0 };
    tokens(r, 40, 2, 8, total);
    for (let i = 0; i < 24; i++) {
      total.n += 0.5;
      r.engine({ service: 'server', running: 2, generatedTokensTotal: total.n, finishedTotal: 5 });
      r.round('timeout');
    }
    expect(r.verdict).toBe('wedged/engine_crawling');
  });

  it('a crawl whose runs now pass once and then fail stays wedged: with no completion passing, nothing recovered', () => {
    const r = new Run(config({ stallAfter: '20s' }));
    r.round();
    const total = { n: 0 };
    tokens(r, 40, 2, 8, total);
    const crawlRound = (result: 'ok' | 'timeout') => {
      total.n += 0.5;
      r.engine({ service: 'server', running: 2, generatedTokensTotal: total.n, finishedTotal: 5 });
      // Each run over a connection of its own: a keep-alive pass after a reused failure is not one to doubt.
      for (const conn of ['fresh', 'keepalive'] as const)
        r.probe({ endpoint: r.cfg.hops[0]!, conn, result, reusedConnection: false });
    };
    for (let i = 0; i < 24; i++) crawlRound('timeout');
    expect(r.verdict).toBe('wedged/engine_crawling');
    const wedgedAt = r.s.counters.transitions;
    // A pass in between, then a failure: every slot has one failure in a row (under wedgeAfter) and none passes,
    // so the verdict says degraded; leaving wedged needs a completion that passed recoverAfter times.
    const states: string[] = [];
    for (let i = 0; i < 6; i++) {
      crawlRound('ok');
      crawlRound('timeout');
      states.push(r.s.state);
    }
    expect(states).toEqual(Array(6).fill('wedged'));
    expect(r.s.counters.transitions).toBe(wedgedAt);
  });

  it('a crawl read noisily (samples hovering at the fraction) keeps its clock, and never drags the baseline down', () => {
    const r = new Run(config({ stallAfter: '20s' }));
    r.round();
    const total = { n: 0 };
    tokens(r, 50, 4, 10, total);
    const baseline = r.s.engines.server!.crawl!.baseline!;
    for (let i = 0; i < 20; i++) tokens(r, i % 2 === 0 ? 3.5 : 6.5, 4, 1, total);
    expect(r.verdict).toBe('degraded/engine_crawling');
    expect(r.s.engines.server!.crawl!.baseline).toBe(baseline);
  });

  it('a slower but not collapsed engine (half its baseline) never crawls: it misses its objective (engine_slow); nothing running judges nothing', () => {
    const r = new Run(config({ stallAfter: '20s' }));
    r.round();
    const total = { n: 0 };
    tokens(r, 40, 2, 8, total);
    tokens(r, 20, 2, 40, total);
    // Issue 41: a 2× slowdown used to join the baseline (samples above half of it did) and stay ok.
    expect(r.verdict).toBe('degraded/engine_slow');
    // 80 tokens a 1.2 s sample over 2 requests: 33 tokens/s each, before as after the slowdown began.
    expect(r.s.engines.server!.crawl!.baseline).toBeCloseTo(100 / 3, 5);
    tokens(r, 0, 0, 40, total);
    expect(r.transitions()).toEqual(['ok/-', 'degraded/engine_slow', 'ok/-']);
  });

  it('intervals in which short probes came and went do not make the baseline: a 30-fold crawl after them is named', () => {
    // vllm_crawl at the example cadence: an engine idle but for our probes, scraped every 5 s. Now and then a scrape
    // finds one probe running; the counter's interval holds the tokens of the few probes that came and went in it,
    // a small fraction of what one request running through it makes. Then a single long stream (100 tokens/s),
    // then every step 30× slower.
    const r = new Run(config({ stallAfter: '20s' }));
    r.round();
    const total = { n: 0 };
    for (let i = 0; i < 12; i++) {
      total.n += 20; // 20 probe tokens in a 5 s interval: 4 tokens/s "per request" if read over it
      r.engine({ service: 'server', running: i % 2, generatedTokensTotal: total.n, finishedTotal: 5 }, 5000);
    }
    for (let i = 0; i < 6; i++) {
      total.n += 500;
      r.engine({ service: 'server', running: 1, generatedTokensTotal: total.n, finishedTotal: 5 }, 5000);
    }
    for (let i = 0; i < 16; i++) {
      total.n += 500 / 30;
      r.engine({ service: 'server', running: 1, generatedTokensTotal: total.n, finishedTotal: 5 }, 5000);
      r.round();
    }
    expect(r.verdict).toBe('degraded/engine_crawling');
    // One stream's 100 tokens/s, not the probes' 4; no crawl sample joined it (they miss the objective).
    expect(r.s.engines.server!.crawl!.baseline).toBeCloseTo(100, 5);
  });

  it("vLLM's inter-token latency is the rate: probes alone make the baseline, and its stats line is not mixed in", () => {
    // An engine idle but for our probes: most scrapes find nothing running, yet every interval's tokens came 10 ms
    // apart (100 tokens/s per request). Then one stream, every step 30× slower.
    const r = new Run(config({ stallAfter: '20s' }));
    r.round();
    const itl = { sum: 0, count: 0 };
    const scrape = (running: number, tokens: number, secondsApart: number) => {
      itl.count += tokens;
      itl.sum += tokens * secondsApart;
      r.engine(
        {
          service: 'server',
          running,
          interTokenLatencySumSeconds: itl.sum,
          interTokenLatencyCount: itl.count,
          generatedTokensTotal: itl.count,
        },
        5000,
      );
      // The stats line beside it: an interval rate over the one request running at its end.
      r.engine(
        { service: 'server', source: 'log', running, genThroughput: tokens / 5, progress: tokens > 0 },
        100,
      );
    };
    for (let i = 0; i < 8; i++) scrape(i % 3 === 0 ? 1 : 0, 20, 0.01);
    expect(r.s.engines.server!.crawl!.baseline).toBeCloseTo(100, 5);
    for (let i = 0; i < 6; i++) scrape(1, 15, 0.3);
    expect(r.verdict).toBe('degraded/engine_crawling');
    expect(r.s.cause).toMatch(/^server makes 3\.3 % of its own tokens per running request \(1 running\)/);
  });

  it('an engine whose histogram goes away (or whose scrapes stop) falls back to its stats line after stallAfter', () => {
    const r = new Run(config({ stallAfter: '20s' }));
    r.round();
    let count = 0;
    for (let i = 0; i < 3; i++) {
      count += 100;
      r.engine(
        {
          service: 'server',
          running: 1,
          interTokenLatencySumSeconds: count / 100,
          interTokenLatencyCount: count,
        },
        5000,
      );
    }
    const samples = () => r.s.engines.server!.crawl!.samples;
    const before = samples();
    const line = () =>
      r.engine({ service: 'server', source: 'log', running: 2, genThroughput: 200, progress: true }, 5000);
    // Within stallAfter of the last histogram the stats line is not mixed in.
    line();
    line();
    expect(samples()).toBe(before);
    for (let i = 0; i < 5; i++) line();
    expect(samples()).toBeGreaterThan(before);
    expect(r.s.engines.server!.crawl!.lastItl).toBeUndefined();
  });

  it('a throughput the engine reports itself (SGLang gen_throughput, batch lines) is read per running request', () => {
    const r = new Run(config({ stallAfter: '20s' }));
    r.round();
    for (let i = 0; i < 8; i++) {
      r.engine({ service: 'decode', source: 'log', progress: true, running: 10, genThroughput: 1000 });
      r.round();
    }
    for (let i = 0; i < 24; i++) {
      r.engine({ service: 'decode', source: 'log', progress: true, running: 10, genThroughput: 40 });
      r.round();
    }
    expect(r.verdict).toBe('degraded/engine_crawling');
    expect(r.s.cause).toMatch(/^decode makes 4 % of its own tokens per running request \(10 running\)/);
  });
});

describe('sleep mode', () => {
  it('a sleeping engine holding requests with no tokens is not stalled, and its clock starts when it wakes', () => {
    const r = new Run(config({ stallAfter: '20s' }));
    r.round();
    for (let i = 0; i < 40; i++) {
      r.engine({ service: 'server', running: 2, queued: 3, generatedTokensTotal: 7, sleeping: true });
      r.feed({ kind: 'tick' }, 1000);
    }
    expect(r.s.engines.server!.stalled).toBe(false);
    expect(r.transitions()).toEqual(['ok/-']);
    // Awake and still nothing moving: a stall, counted from the wake-up.
    for (let i = 0; i < 19; i++) {
      r.engine({ service: 'server', running: 2, queued: 3, generatedTokensTotal: 7, sleeping: false }, 500);
      r.feed({ kind: 'tick' }, 500);
    }
    expect(r.s.engines.server!.stalled).toBe(false);
    for (let i = 0; i < 3; i++)
      r.engine({ service: 'server', running: 2, generatedTokensTotal: 7, sleeping: false });
    expect(r.s.engines.server!.stalled).toBe(true);
  });
});

describe("the router's view", () => {
  it("the router's oldest in-flight request past orphanAfter while completions pass → degraded/requests_orphaned", () => {
    const r = new Run(config({ orphanAfter: '5m' }));
    r.round();
    r.engine({ service: 'router', routerInflight: 3, routerOldestInflightMs: 180_000, running: 3 });
    r.round();
    expect(r.s.state).toBe('ok');
    r.engine({ service: 'router', routerInflight: 3, routerOldestInflightMs: 300_000, running: 3 });
    r.round();
    expect(r.verdict).toBe('degraded/requests_orphaned');
    expect(r.s.cause).toBe(
      'router holds a request in flight for over 300 s (3 in flight) while completions pass: nothing finishes it',
    );
    r.engine({ service: 'router', routerInflight: 1, routerOldestInflightMs: 0, running: 1 });
    r.round();
    r.round();
    expect(r.s.state).toBe('ok');
  });

  it('router holding requests, decode refusing, prefill up, completions failing → wedged/pd_pair_half_failed naming both legs', () => {
    const r = new Run({
      ...config({ stallAfter: '10s' }),
      probes: { chat: { kind: 'chat' }, health: { kind: 'health' } },
    });
    r.round();
    for (let i = 0; i < 14; i++) {
      r.engine({ service: 'router', routerInflight: 2, running: 0, workersUnhealthy: 1 }, 500);
      r.engine({ service: 'prefill', running: 0, transferQueue: 2, generatedTokensTotal: 0 }, 100);
      r.engine({ service: 'decode', scrapeOk: false }, 100);
      r.round('timeout');
    }
    expect(r.verdict).toBe('wedged/pd_pair_half_failed');
    expect(r.s.cause).toMatch(
      /^router holds requests nothing completes \(2 in flight at its last scrape\) while decode is down \(its \/metrics scrape fails\) and prefill is up; it reports 1 worker\(s\) unhealthy$/,
    );
    // Without it the leg that waits read as the culprit (prefill holds transfers with no progress).
    expect(r.s.engines.prefill!.stalled).toBe(true);
  });

  it('a health probe of the refused leg does not turn the half-failed pair into down/health_failing', () => {
    const r = new Run(config({ stallAfter: '10s' }));
    r.round();
    for (let i = 0; i < 14; i++) {
      r.engine({ service: 'router', routerInflight: 2, running: 0 }, 500);
      r.engine({ service: 'prefill', running: 0, transferQueue: 2, generatedTokensTotal: 0 }, 100);
      r.engine({ service: 'decode', scrapeOk: false }, 100);
      r.probe({ endpoint: 'decode', probe: 'health', probeKind: 'health', result: 'connect_error' }, 100);
      r.round('timeout');
    }
    expect(r.verdict).toBe('wedged/pd_pair_half_failed');
    expect(r.s.cause).toMatch(/while decode is down \(refusing connections\) and prefill is up$/);
    // The leg is back and the router released what it held: ok again, through the usual recovery.
    r.engine({ service: 'router', routerInflight: 0, running: 0 }, 500);
    r.engine({ service: 'decode', running: 0 }, 100);
    r.engine({ service: 'prefill', running: 0, transferQueue: 0, generatedTokensTotal: 9 }, 100);
    r.probe({ endpoint: 'decode', probe: 'health', probeKind: 'health', result: 'ok' }, 100);
    r.probe({ endpoint: 'decode', probe: 'health', probeKind: 'health', result: 'ok' }, 100);
    for (let i = 0; i < 4; i++) r.round();
    expect(r.s.state).toBe('ok');
  });
});
