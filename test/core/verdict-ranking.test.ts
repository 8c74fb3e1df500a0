// The verdict names the strongest evidence that fits the state (EVIDENCE: signature > counter > engine > router >
// answer > path > warning > pattern > failing > format > load), whatever shape the symptoms have. One test per
// ordering gap the issue 26 review found in the branch-per-shape verdict (1a–1e), each on a memory built by hand.
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../src/core/verdict/evaluate.js';
import { cfg, critical, engine, NOW, slot, target } from './verdict-state.js';

const failingChat = () =>
  slot('chat', 'chat', 'router', 'timeout', { error: 'no first token within 30000 ms' });

describe('the strongest evidence names the verdict, whatever the symptoms', () => {
  it('1a: a live server failing its health check with completions failing, and KV-transfer counters rising → kv_transfer_failing (counter above engine)', () => {
    const s = target(
      [failingChat(), slot('health', 'health', 'router', 'http_error', { status: 503 })],
      [
        engine('decode', {
          running: 1,
          failures: { totals: {}, recent: [{ at: NOW - 2_000, kind: 'kv_transfer_failed', n: 4 }] },
        }),
      ],
    );
    const v = evaluate(s, NOW, cfg());
    expect(`${v.state}/${v.diagnosis}`).toBe('wedged/kv_transfer_failing');
    expect(v.cause).toBe(
      'decode: 4 KV transfers failed within 60 s (its own counters); completions fail too',
    );
    // Without the counters the same symptoms are the engine's failing health check, as before.
    const plain = evaluate(target([...Object.values(s.slots)]), NOW, cfg());
    expect(`${plain.state}/${plain.diagnosis}`).toBe('wedged/health_generate_failing');
  });

  it('1b: a confirmed critical line outranks the half-failed pair, and its cause keeps the pair, the line and its root cause', () => {
    const legs = [
      engine('router', { routerInflight: 2, routerLastBusyAt: NOW - 1_000, workersUnhealthy: 1 }),
      // The leg that waits for its gone peer reads as stalled: the pair explains it.
      engine('prefill', { transferQueue: 2, stalled: true, lastProgressAt: NOW - 90_000 }),
      engine('decode', { unknown: true }),
    ];
    const line = critical('sglang_disagg_lost_prefill_connection', 'decode', {
      rootCause: 'KVTransferError: prefill instance lost',
    });
    const pair = target([failingChat()], legs);
    const named = evaluate(pair, NOW, cfg());
    expect(`${named.state}/${named.diagnosis}`).toBe('wedged/pd_pair_half_failed');
    expect(named.cause).toBe(
      'router holds requests nothing completes (2 in flight at its last scrape) while decode is down (its /metrics scrape fails) and prefill is up; it reports 1 worker(s) unhealthy',
    );
    const v = evaluate(target([failingChat()], legs, { confirmedCritical: line }), NOW, cfg());
    expect(`${v.state}/${v.diagnosis}`).toBe('wedged/log:sglang_disagg_lost_prefill_connection');
    expect(v.cause).toBe(
      `${named.cause}; after sglang_disagg_lost_prefill_connection on decode (root cause: KVTransferError: prefill instance lost)`,
    );
  });

  it('1c: a critical line that came with the incident, not yet confirmed, outranks a crawl and the counters when completions hang', () => {
    const hung = { probe: 'chat', endpoint: 'router', conn: 'fresh' as const, startedAt: NOW - 25_000 };
    const crawling = engine('decode', {
      running: 4,
      crawl: { crawling: true, ratio: 0.05, belowSince: NOW - 70_000, samples: 10 },
      failures: { totals: {}, recent: [{ at: NOW - 2_000, kind: 'kv_transfer_failed', n: 3 }] },
    });
    const chat = slot('chat', 'chat', 'router', 'ok', { agoMs: 40_000 });
    const s = target([chat], [crawling], {
      inflight: [hung],
      criticalSinceOk: [critical('sglang_scheduler_exception', 'decode', { time: NOW - 24_000 })],
    });
    const v = evaluate(s, NOW, cfg());
    expect(`${v.state}/${v.diagnosis}`).toBe('wedged/log:sglang_scheduler_exception');
    expect(v.cause).toBe(
      'chat on router/fresh in flight for 25 s and no completion has finished since it started; after sglang_scheduler_exception on decode',
    );
    // Without the line, the counters name it; without those too, the crawl.
    const noLine = evaluate({ ...s, criticalSinceOk: [] }, NOW, cfg());
    expect(noLine.diagnosis).toBe('kv_transfer_failing');
    const crawlOnly = evaluate(
      { ...s, criticalSinceOk: [], engines: { decode: { ...crawling, failures: undefined } } },
      NOW,
      cfg(),
    );
    expect(crawlOnly.diagnosis).toBe('engine_crawling');
    expect(crawlOnly.cause).toContain('completions fail or hang');
  });

  it('1d: degraded — a stalled engine outranks a failing hop (path), and a stalled rank outranks a warning and a failing slot', () => {
    const hops = ['proxy', 'router'];
    const stalled = engine('decode', { running: 3, stalled: true, lastProgressAt: NOW - 80_000 });
    const slots = [slot('chat', 'chat', 'proxy', 'timeout'), slot('chat', 'chat', 'router', 'ok')];
    const hop = evaluate(target(slots), NOW, cfg(hops));
    expect(`${hop.state}/${hop.diagnosis}`).toBe('degraded/hop:proxy');
    const v = evaluate(target(slots, [stalled]), NOW, cfg(hops));
    expect(`${v.state}/${v.diagnosis}`).toBe('degraded/engine_stalled');
    expect(v.cause).toBe(
      'decode holds 3 running and 0 queued requests (0 in transfer, 0 bootstrapping) with no progress for 80 s',
    );

    const rank = engine('decode', {
      running: 2,
      ranks: {
        '0': { running: 1, lastSignalAt: NOW - 1_000, lastProgressAt: NOW - 1_000, stalled: false },
        '1': { running: 1, lastSignalAt: NOW - 1_000, lastProgressAt: NOW - 70_000, stalled: true },
      },
    });
    const warned = {
      warnings: [
        {
          time: NOW - 30_000,
          service: 'decode',
          rule: 'x_timeout',
          class: 'transfer_timeout' as const,
          line: '',
        },
      ],
    };
    const some = [
      slot('chat', 'chat', 'router', 'timeout'),
      slot('chat', 'chat', 'router', 'ok', { conn: 'keepalive' }),
    ];
    const w = evaluate(target(some, [], warned), NOW, cfg());
    expect(`${w.state}/${w.diagnosis}`).toBe('degraded/warning:transfer_timeout');
    const r = evaluate(target(some, [rank], warned), NOW, cfg());
    expect(`${r.state}/${r.diagnosis}`).toBe('degraded/rank_stalled');
    expect(r.cause).toMatch(
      /^decode rank 1 holds 1 running requests with no tokens for 70 s while rank 0 progress/,
    );
  });

  it('1e: wedged by intermittence everywhere — a stalled engine and a stuck router outrank the warning and the pattern', () => {
    // Most runs fail on every slot, with passes in between; the last run of each failed once (no streak yet).
    const flaky = (conn: 'fresh' | 'keepalive') =>
      slot('chat', 'chat', 'router', 'timeout', {
        conn,
        failStreak: 1,
        recent: [1, 1, 0, 1, 1, 0, 1, 1, 0, 1],
      });
    const slots = [flaky('fresh'), flaky('keepalive')];
    const warned = {
      warnings: [
        {
          time: NOW - 30_000,
          service: 'decode',
          rule: 'x_timeout',
          class: 'transfer_timeout' as const,
          line: '',
        },
      ],
    };
    const plain = evaluate(target(slots, [], warned), NOW, cfg());
    expect(`${plain.state}/${plain.diagnosis}`).toBe('wedged/warning:transfer_timeout');
    expect(evaluate(target(slots), NOW, cfg()).diagnosis).toBe('intermittent');

    const stalled = engine('decode', { running: 3, stalled: true, lastProgressAt: NOW - 80_000 });
    const v = evaluate(target(slots, [stalled], warned), NOW, cfg());
    expect(`${v.state}/${v.diagnosis}`).toBe('wedged/engine_stalled');
    // The pattern that makes it a wedge stays in the cause.
    expect(v.cause).toMatch(
      /of its last 10 runs failed .*; most runs fail on every completion slot; decode holds 3 running/,
    );

    const idle = { idleSince: NOW - 70_000 };
    const router = engine('router', { routerInflight: 2, routerBusySince: NOW - 70_000 });
    const r = evaluate(
      target(slots, [router, engine('prefill', idle), engine('decode', idle)], warned),
      NOW,
      cfg(),
    );
    expect(`${r.state}/${r.diagnosis}`).toBe('wedged/router_stuck');
    expect(r.cause).toContain(
      'router holds 2 requests in flight while prefill, decode run and queue nothing, for 70 s',
    );
  });
});
