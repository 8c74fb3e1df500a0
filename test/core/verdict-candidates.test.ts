// The candidate list behind the verdict (src/core/verdict/): every candidate is worth what its vocabulary row says,
// fits only states its row allows, every state the symptoms make has a candidate that names it, the pick is by
// evidence then specificity then registry order, and a slot inside its wrong-answer window is neither clean nor
// passing for recovery.
import { describe, expect, it } from 'vitest';
import { applyVerdict } from '../../src/core/reduce/hysteresis.js';
import type { DetectEvent, TargetMemory } from '../../src/core/memory.js';
import { candidate, strongest } from '../../src/core/verdict/pick.js';
import { FAMILIES } from '../../src/core/verdict/families.js';
import { stateOf } from '../../src/core/verdict/state-of.js';
import { symptomsOf } from '../../src/core/verdict/symptoms.js';
import { evaluate } from '../../src/core/verdict/evaluate.js';
import { diagnosisEntry } from '../../src/core/vocabulary.js';
import { cfg, critical, engine, NOW, slot, target } from './verdict-state.js';

const hung = { probe: 'chat', endpoint: 'router', conn: 'fresh' as const, startedAt: NOW - 25_000 };
const failures = (n: number) => ({
  totals: {},
  recent: [{ at: NOW - 2_000, kind: 'kv_transfer_failed' as const, n }],
});

/** Memories of every shape the state rules know, and a few of the degradations. */
const MEMORIES: Record<string, { s: TargetMemory; hops?: string[]; state: string | undefined }> = {
  healthy: { s: target([slot('chat', 'chat', 'router', 'ok')]), state: undefined },
  'half-failed pair': {
    s: target(
      [slot('chat', 'chat', 'router', 'timeout')],
      [
        engine('router', { routerInflight: 1, routerLastBusyAt: NOW - 1_000 }),
        engine('prefill'),
        engine('decode', { unknown: true }),
      ],
    ),
    state: 'wedged',
  },
  'health 503 on a live server': {
    s: target([
      slot('chat', 'chat', 'router', 'timeout'),
      slot('health', 'health', 'router', 'http_error', { status: 503 }),
    ]),
    state: 'wedged',
  },
  'health refused': {
    s: target([
      slot('chat', 'chat', 'router', 'timeout'),
      slot('health', 'health', 'router', 'connect_error'),
    ]),
    state: 'down',
  },
  'port refused': {
    s: target([slot('chat', 'chat', 'router', 'connect_error')]),
    state: 'down',
  },
  'confirmed line, completions not back': {
    s: target([slot('chat', 'chat', 'router', 'ok', { okStreak: 1 })], [], {
      confirmedCritical: critical('sglang_watchdog_timeout', 'decode'),
    }),
    state: 'wedged',
  },
  'every completion failing': {
    s: target([slot('chat', 'chat', 'router', 'timeout')]),
    state: 'wedged',
  },
  'a hang with nothing finished since': {
    s: target([slot('chat', 'chat', 'router', 'ok', { agoMs: 40_000 })], [], { inflight: [hung] }),
    state: 'wedged',
  },
  'intermittent everywhere': {
    s: target([
      slot('chat', 'chat', 'router', 'timeout', { failStreak: 1, recent: [1, 1, 0, 1, 1, 0, 1, 1, 0, 1] }),
    ]),
    state: 'wedged',
  },
  'router stuck, nothing passing': {
    s: target(
      [slot('chat', 'chat', 'router', 'timeout', { failStreak: 1 })],
      [
        engine('router', { routerInflight: 2, routerBusySince: NOW - 70_000 }),
        engine('decode', { idleSince: NOW - 70_000 }),
      ],
    ),
    state: 'wedged',
  },
  'engine stalled, nothing passing': {
    s: target(
      [slot('chat', 'chat', 'router', 'timeout', { failStreak: 1 })],
      [engine('decode', { running: 1, stalled: true, lastProgressAt: NOW - 70_000 })],
    ),
    state: 'wedged',
  },
  'counters with completions passing': {
    s: target([slot('chat', 'chat', 'router', 'ok')], [engine('decode', { failures: failures(3) })]),
    state: 'degraded',
  },
  'wrong answers held': {
    s: target([slot('canary', 'canary', 'router', 'ok', { wrongHeld: true, answers: [1, 0] })]),
    state: 'degraded',
  },
  'one hop failing': {
    s: target([slot('chat', 'chat', 'proxy', 'timeout'), slot('chat', 'chat', 'router', 'ok')]),
    hops: ['proxy', 'router'],
    state: 'degraded',
  },
};

describe('the candidates', () => {
  for (const [name, m] of Object.entries(MEMORIES)) {
    it(`${name}: every candidate is its row's evidence within its row's states; the state is ${m.state ?? 'none'} and a candidate names it`, () => {
      const c = cfg(m.hops);
      const sym = symptomsOf(m.s, NOW, c);
      const all = FAMILIES.flatMap((f) => f(m.s, NOW, c, sym));
      for (const x of all) {
        const row = diagnosisEntry(x.diagnosis);
        expect(row, x.diagnosis).toBeDefined();
        expect(x.evidence).toBe(row!.evidence);
        expect(x.fits.length).toBeGreaterThan(0);
        for (const st of x.fits) expect(row!.states, `${x.diagnosis} fits ${st}`).toContain(st);
      }
      const state = stateOf(sym, all);
      expect(state).toBe(m.state);
      if (state !== undefined) {
        expect(strongest(all, state)).toBeDefined();
        expect(evaluate(m.s, NOW, c).diagnosis).not.toBeNull();
      }
    });
  }

  it('the pick: evidence kind first, then how specific, then the first listed; explained kinds drop out', () => {
    const hop = candidate('hop:proxy', 'a hop');
    const stall = candidate('engine_stalled', 'a stall');
    const user = candidate('log:mine', 'a user line', { rank: 1 });
    const builtin = candidate('log:sglang_watchdog_timeout', 'a built-in line', { rank: 2 });
    const thread = candidate('kv_bootstrap_thread_dead', 'the thread', { rank: 3 });
    expect(strongest([hop, stall], 'degraded')).toBe(stall);
    expect(strongest([user, builtin, stall], 'wedged')).toBe(builtin);
    expect(strongest([builtin, thread], 'wedged')).toBe(thread);
    const first = candidate('engine_stalled', 'first');
    expect(strongest([first, stall], 'wedged')).toBe(first);
    // A candidate only names the states it fits.
    expect(strongest([hop], 'wedged')).toBeUndefined();
    const pair = candidate('pd_pair_half_failed', 'the pair', { explains: ['counter', 'engine'] });
    const kv = candidate('kv_transfer_failing', 'counters');
    expect(strongest([kv, stall, pair], 'wedged')).toBe(pair);
    expect(strongest([kv, stall, pair, builtin], 'wedged')).toBe(builtin);
  });
});

describe('a slot inside its wrong-answer window', () => {
  it('is not clean, and does not gate recovery as if it passed: wedged → degraded/wrong_output once the chat slots recovered', () => {
    // The canary answered right last (no wrong answer in a row) but its window holds a wrong one.
    const canary = slot('canary', 'canary', 'router', 'ok', {
      okStreak: 1,
      wrongHeld: true,
      // Its last answer was right (the reducer sets this with it): wrong_output, not canary_never_passed.
      answeredRight: true,
      answers: [1, 0],
      lastWrong: 'expected 4, got 5',
    });
    const s = target([slot('chat', 'chat', 'router', 'ok'), canary], [], {
      state: 'wedged',
      diagnosis: 'completions_failing',
    });
    const v = evaluate(s, NOW, cfg());
    expect(`${v.state}/${v.diagnosis}`).toBe('degraded/wrong_output');
    const events: DetectEvent[] = [];
    const t = applyVerdict(s, v, NOW, cfg(), events);
    expect(t?.to).toBe('degraded');
    expect(s.diagnosis).toBe('wrong_output');
  });
});
