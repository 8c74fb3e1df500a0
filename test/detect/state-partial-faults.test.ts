// The classifier on faults that fail only part of the probes (issue 13): intermittent failures, progress that
// means tokens (per engine and per rank), leaked PD queues, a stuck router, and the aborts our own probes cause.
import { describe, expect, it } from 'vitest';
import { detectSchema } from '../../src/config/schema.js';
import type { ClassifierConfig } from '../../src/core/memory.js';
import type { EngineSignal } from '../../src/core/signals.js';
import { Run } from './run.js';

const base = {
  hops: ['proxy', 'router'],
  probes: {
    chat: { kind: 'chat' as const },
    health: { kind: 'health' as const },
  },
};
const config = (detect: Record<string, unknown> = {}): ClassifierConfig => ({
  ...base,
  detect: detectSchema.parse({ stallAfter: '10s', abortStormCount: 3, abortStormWindow: '60s', ...detect }),
});

describe('intermittent failures (issue 13 item 4)', () => {
  it('one hang in three on a slot never makes a streak, and is degraded/intermittent once 3 of the last 10 failed', () => {
    const r = new Run(config());
    let n = 0;
    const failures: number[] = [];
    for (let i = 0; i < 9; i++) {
      n++;
      r.round('timeout', (e, c) => e === 'router' && c === 'fresh' && n % 3 === 0);
      failures.push(r.s.slots['chat|router|fresh']!.recent!.reduce((a, b) => a + b, 0));
      expect(r.s.slots['chat|router|fresh']!.failStreak).toBeLessThan(2);
    }
    expect(failures).toEqual([0, 0, 1, 1, 1, 2, 2, 2, 3]);
    expect(r.transitions()).toEqual(['ok/-', 'degraded/intermittent']);
    expect(r.s.cause).toContain('chat on router/fresh: 3 of its last 9 runs failed');
  });

  it('three isolated failures are intermittent, two are not; the window forgets old ones and the target recovers', () => {
    const r = new Run(config());
    for (let i = 0; i < 10; i++)
      r.round('timeout', (e, c) => e === 'proxy' && c === 'fresh' && i % 3 === 0 && i < 9);
    expect(r.s.state).toBe('degraded');
    expect(r.s.diagnosis).toBe('intermittent');
    // Passing runs push the failures out of the window.
    for (let i = 0; i < 10; i++) r.round();
    expect(r.s.state).toBe('ok');
    const rr = new Run(config());
    for (let i = 0; i < 10; i++)
      rr.round('timeout', (e, c) => e === 'proxy' && c === 'fresh' && (i === 2 || i === 6));
    expect(rr.transitions()).toEqual(['ok/-']);
  });

  it('a solid wedge that recovers leaves no intermittent behind', () => {
    const r = new Run(config());
    r.round();
    r.round();
    for (let i = 0; i < 4; i++) r.round('timeout', () => true);
    expect(r.s.state).toBe('wedged');
    for (let i = 0; i < 3; i++) r.round();
    expect(r.s.state).toBe('ok');
    expect(r.transitions()).toEqual(['ok/-', 'wedged/completions_failing', 'ok/-']);
  });

  it('mostly failures on every slot with passes in between is wedged/intermittent, and stays wedged across single passes', () => {
    const r = new Run(config());
    r.round();
    // fail, fail, pass, fail, fail, pass, …: 2 of 3 fail on every slot.
    for (let i = 1; i <= 12; i++) r.round('timeout', () => i % 3 !== 0);
    expect(r.s.state).toBe('wedged');
    expect(r.s.diagnosis).toBe('intermittent');
    // The incident shows the window's evidence (issue 26: held while the streaks come and go).
    expect(r.s.cause).toMatch(/of its last \d+ runs failed/);
    const after = r.transitions().slice(1);
    expect(after.every((t) => t.startsWith('wedged/'))).toBe(true);
  });

  it('a slot failing outright beside slots failing now and then is named intermittent; a solid streak alone is not', () => {
    const r = new Run(config());
    r.round();
    // router/keepalive (say a 7-request tool-call matrix) fails every run; router/fresh one run in three.
    for (let i = 1; i <= 9; i++)
      r.round('timeout', (e, c) => e === 'router' && (c === 'keepalive' || i % 3 === 0));
    expect(r.s.state).toBe('degraded');
    expect(r.s.diagnosis).toBe('intermittent');
    expect(r.s.cause).toContain('chat on router/fresh: 3 of its last 10 runs failed');
    const solid = new Run(config());
    solid.round();
    for (let i = 0; i < 6; i++) solid.round('timeout', (e) => e === 'router');
    expect(solid.s.diagnosis).toBe('completions_failing');
  });

  it('the window is configurable (detect.intermittentFailures / intermittentWindow)', () => {
    const r = new Run(config({ intermittentFailures: 2, intermittentWindow: 4 }));
    r.round();
    r.round('timeout', (e, c) => e === 'router' && c === 'fresh');
    r.round();
    expect(r.s.state).toBe('ok');
    r.round('timeout', (e, c) => e === 'router' && c === 'fresh');
    expect(r.s.diagnosis).toBe('intermittent');
    expect(() => detectSchema.parse({ intermittentFailures: 11 })).toThrow(/intermittentWindow/);
  });
});

describe('progress means tokens (issue 13 item 5)', () => {
  const logLine = (r: Run, p: Partial<EngineSignal>) =>
    r.feed({ kind: 'engine', target: 't', service: 'decode', source: 'log', time: r.now, ...p }, 2000);

  it('lines that report no tokens do not reset the stall clock: vLLM 0.0 tokens/s, a rule-extracted gauge', () => {
    const r = new Run(config());
    r.round();
    logLine(r, { running: 1, progress: true });
    for (let i = 0; i < 6; i++) {
      // `Avg generation throughput: 0.0 tokens/s, Running: 1 reqs` and a user rule's extract: no progress.
      logLine(r, { running: 1, genThroughput: 0, progress: false });
      logLine(r, { running: 1 });
    }
    expect(r.s.engines.decode!.stalled).toBe(true);
    expect(r.steps.flatMap((s) => s.events).map((e) => e.type)).toContain('engine_stalled');
  });

  it('a counter going down (a restart) is not progress', () => {
    const r = new Run(config());
    r.round();
    r.engine({ running: 2, finishedTotal: 100, generatedTokensTotal: 5000 });
    r.engine({ running: 2, finishedTotal: 3, generatedTokensTotal: 40 }, 6000);
    r.engine({ running: 2, finishedTotal: 3, generatedTokensTotal: 40 }, 5000);
    expect(r.s.engines.decode!.stalled).toBe(true);
  });

  it('one DP rank with running > 0 and no tokens while its sibling produces them is degraded/rank_stalled, naming the rank', () => {
    const r = new Run(config());
    r.round();
    for (let i = 0; i < 8; i++) {
      r.engine(
        {
          running: 3,
          generatedTokensTotal: 1000 + i * 50,
          ranks: {
            '0': { running: 2, generatedTokensTotal: 1000 + i * 50 },
            '1': { running: 1, generatedTokensTotal: 700 },
          },
        },
        2000,
      );
      r.round();
    }
    expect(r.s.state).toBe('degraded');
    expect(r.s.diagnosis).toBe('rank_stalled');
    expect(r.s.cause).toMatch(
      /^decode rank 1 holds 1 running requests with no tokens for \d+ s while rank 0 progress/,
    );
    expect(r.steps.flatMap((s) => s.events)).toContainEqual(
      expect.objectContaining({ type: 'rank_stalled', rank: '1' }),
    );
    expect(r.s.engines.decode!.stalled).toBe(false);
    // The rank produces tokens again: back to ok after the passing rounds.
    for (let i = 0; i < 3; i++) {
      r.engine(
        {
          ranks: {
            '0': { running: 2, generatedTokensTotal: 2000 + i },
            '1': { running: 1, generatedTokensTotal: 800 + i },
          },
        },
        2000,
      );
      r.round();
    }
    expect(r.s.state).toBe('ok');
  });

  it('per-rank lines that say so themselves (vLLM Engine 001: … 0.0 tokens/s) are judged the same way', () => {
    const r = new Run(config());
    r.round();
    for (let i = 0; i < 7; i++) {
      logLine(r, { ranks: { '0': { running: 4, progress: true } }, progress: true });
      logLine(r, { ranks: { '1': { running: 1, progress: false } }, progress: false });
      r.round();
    }
    expect(r.s.diagnosis).toBe('rank_stalled');
    expect(r.s.cause).toContain('decode rank 1');
  });

  it('an idle rank, or a rank whose siblings make no tokens either, is not rank_stalled', () => {
    const r = new Run(config());
    r.round();
    for (let i = 0; i < 8; i++) {
      r.engine(
        {
          ranks: {
            '0': { running: 2, generatedTokensTotal: 1000 + i * 50 },
            '1': { running: 0, generatedTokensTotal: 700 },
          },
        },
        2000,
      );
      r.round();
    }
    expect(r.s.state).toBe('ok');
    const r2 = new Run(config());
    r2.round();
    for (let i = 0; i < 8; i++) {
      r2.engine(
        {
          ranks: {
            '0': { running: 2, generatedTokensTotal: 1000 },
            '1': { running: 1, generatedTokensTotal: 700 },
          },
        },
        2000,
      );
      r2.round();
    }
    expect(r2.s.diagnosis).not.toBe('rank_stalled');
  });
});

describe('leaks before wedges (issue 13 item 6)', () => {
  it('bootstrap queue entries held for leakAfter while the engine runs nothing and completions pass → degraded/queue_leak', () => {
    const r = new Run(config({ leakAfter: '10m', stallAfter: '60s' }));
    r.round();
    for (let t = 0; t < 9 * 60; t += 15) {
      r.engine(
        { service: 'prefill', running: 0, queued: 0, preallocQueue: 4, finishedTotal: 10 + t },
        15_000,
      );
      r.round();
      expect(r.s.state).toBe('ok');
    }
    for (let t = 0; t < 90; t += 15) {
      r.engine(
        { service: 'prefill', running: 0, queued: 0, preallocQueue: 4, finishedTotal: 1000 + t },
        15_000,
      );
      r.round();
    }
    expect(r.transitions()).toEqual(['ok/-', 'degraded/queue_leak']);
    expect(r.s.cause).toContain('prefill holds 4 bootstrapping');
    // The queue drains: the leak is over.
    r.engine({ service: 'prefill', running: 0, queued: 0, preallocQueue: 0 }, 15_000);
    r.round();
    r.round();
    expect(r.s.state).toBe('ok');
  });

  it('a queue that empties now and then, even on an engine that is always busy, is no leak', () => {
    const r = new Run(config({ leakAfter: '2m', stallAfter: '60s' }));
    r.round();
    for (let t = 0; t < 40; t++) {
      r.engine(
        { service: 'prefill', running: 0, preallocQueue: t % 6 === 5 ? 0 : 2, finishedTotal: t },
        15_000,
      );
      r.round();
    }
    for (let t = 0; t < 40; t++) {
      r.engine(
        { service: 'decode', running: 5, transferQueue: t % 7 === 6 ? 0 : 3, finishedTotal: 100 + t },
        15_000,
      );
      r.round();
    }
    expect(r.transitions()).toEqual(['ok/-']);
  });

  it('the leak floor: a PD queue that never drops below 1 for leakAfter under continuous traffic → degraded/queue_leak (issue 26)', () => {
    const r = new Run(config({ leakAfter: '2m', stallAfter: '60s' }));
    r.round();
    // A busy decode: its transfer queue moves with the traffic, but one stranded entry keeps it from ever reaching 0.
    for (let t = 0; t < 7; t++) {
      r.engine({ service: 'decode', running: 6, transferQueue: 1 + (t % 3), finishedTotal: 100 + t }, 15_000);
      r.round();
      expect(r.s.state).toBe('ok');
    }
    for (let t = 0; t < 2; t++) {
      r.engine({ service: 'decode', running: 6, transferQueue: 1 + (t % 3), finishedTotal: 200 + t }, 15_000);
      r.round();
    }
    expect(r.transitions()).toEqual(['ok/-', 'degraded/queue_leak']);
    expect(r.s.cause).toMatch(
      /^decode holds 0 bootstrapping and \d in-transfer requests, never fewer than 1 for 2 min, under traffic/,
    );
    r.engine({ service: 'decode', running: 6, transferQueue: 0, finishedTotal: 300 }, 15_000);
    r.round();
    r.round();
    expect(r.s.state).toBe('ok');
  });

  it('router in-flight > 0 while every engine runs and queues nothing for stallAfter → wedged/router_stuck', () => {
    const r = new Run(config({ stallAfter: '60s', hangAfter: '20s' }));
    r.round();
    const inflight = (at: number) => [
      { probe: 'chat', endpoint: 'router', conn: 'fresh' as const, startedAt: at },
      { probe: 'chat', endpoint: 'proxy', conn: 'fresh' as const, startedAt: at },
    ];
    const started = r.now;
    for (let i = 0; i < 14; i++) {
      r.engine({ service: 'router', routerInflight: 2, running: 0 }, 2500);
      r.engine({ service: 'prefill', running: 0, queued: 0, preallocQueue: 0 }, 1);
      r.engine({ service: 'decode', running: 0, queued: 0, transferQueue: 0 }, 1);
      r.feed({ kind: 'tick', inflight: inflight(started) }, 2500);
    }
    expect(r.s.state).toBe('wedged');
    expect(r.diagnoses()).toContain('completions_hung');
    expect(r.s.diagnosis).toBe('router_stuck');
    expect(r.s.cause).toMatch(
      /router holds 2 requests in flight while prefill, decode run and queue nothing/,
    );
  });

  it('router in-flight with a busy engine, or with completions passing, is not router_stuck', () => {
    const r = new Run(config({ stallAfter: '60s' }));
    r.round();
    for (let i = 0; i < 30; i++) {
      r.engine({ service: 'router', routerInflight: 3, running: 3, finishedTotal: i }, 2500);
      r.engine({ service: 'decode', running: i % 2, finishedTotal: i }, 2500);
      r.round();
    }
    expect(r.transitions()).toEqual(['ok/-']);
  });
});

describe('our own aborts are ours (issue 13 item 7)', () => {
  it('abort lines carrying an id our probe sent do not count toward a storm; the same lines without it do', () => {
    const r = new Run(config());
    r.round();
    r.feed({
      kind: 'tick',
      inflight: [
        { probe: 'chat', endpoint: 'router', conn: 'fresh', startedAt: r.now, requestIds: ['wedgewatch-aa'] },
      ],
    });
    r.probe({ endpoint: 'router', result: 'ok', requestIds: ['wedgewatch-bb'] });
    for (let i = 0; i < 4; i++) r.abort('wedgewatch-aa');
    for (let i = 0; i < 4; i++) r.abort('wedgewatch-bb');
    expect(r.s.aborts).toEqual([]);
    expect(r.s.ownAborts).toBe(8);
    expect(r.s.state).toBe('ok');
    for (let i = 0; i < 3; i++) r.abort('user-request-1');
    expect(r.s.diagnosis).toBe('abort_storm');
  });

  it('one id hides at most 16 lines, and only while it is among the 256 most recent ids', () => {
    const r = new Run(config());
    r.round();
    r.probe({ endpoint: 'router', requestIds: ['wedgewatch-cc'] });
    for (let i = 0; i < 16; i++) r.abort('wedgewatch-cc');
    expect(r.s.aborts.length).toBe(0);
    r.abort('wedgewatch-cc');
    expect(r.s.aborts.length).toBe(1);
    const rr = new Run(config());
    rr.round();
    rr.probe({ endpoint: 'router', requestIds: ['wedgewatch-old'] });
    rr.probe({ endpoint: 'router', requestIds: Array.from({ length: 256 }, (_, i) => `wedgewatch-${i}`) });
    rr.abort('wedgewatch-old');
    expect(rr.s.aborts.length).toBe(1);
    expect(rr.s.ownIds!.length).toBe(256);
  });
});
