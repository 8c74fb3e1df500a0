// The pure traffic rules: readiness per target and hop, the pool rule, and the agent line HAProxy reads.
import { describe, expect, it } from 'vitest';
import { initialState, type TargetMemory } from '../../src/core/memory.js';
import type { TargetStateName } from '../../src/core/vocabulary.js';
import { agentReply } from '../../src/outputs/traffic/agent-reply.js';
import { placeMembers } from '../../src/outputs/traffic/pools.js';
import { readinessOf, type ReadinessRules } from '../../src/outputs/traffic/readiness.js';
import { TrafficView } from '../../src/outputs/traffic/view.js';

const RULES: ReadinessRules = { ready: ['ok', 'degraded'], wedgeAfter: 2, downAfter: 2 };

function memory(target: string, state: TargetStateName, diagnosis: string | null = null): TargetMemory {
  const m = initialState(target, 1_000);
  m.state = state;
  m.diagnosis = diagnosis;
  return m;
}

function slot(m: TargetMemory, endpoint: string, conn: 'fresh' | 'keepalive', failStreak: number): void {
  m.slots[`chat|${endpoint}|${conn}`] = {
    probe: 'chat',
    probeKind: 'chat',
    endpoint,
    conn,
    failStreak,
    okStreak: failStreak === 0 ? 3 : 0,
    slowStreak: 0,
    leakStreak: 0,
    last: { result: failStreak === 0 ? 'ok' : 'timeout', start: 0, durationMs: 1 },
  };
}

describe('readiness', () => {
  it('ok and degraded are ready; unknown (start-up), wedged and down are not', () => {
    for (const [state, ready] of [
      ['ok', true],
      ['degraded', true],
      ['unknown', false],
      ['wedged', false],
      ['down', false],
    ] as const)
      expect(readinessOf(memory('t', state), RULES).ready, state).toBe(ready);
  });

  it('a hop whose every completion slot fails is out while the target is only degraded; the hop behind it is in', () => {
    const m = memory('t', 'degraded', 'hop:proxy');
    slot(m, 'proxy', 'fresh', 2);
    slot(m, 'proxy', 'keepalive', 3);
    slot(m, 'router', 'fresh', 0);
    expect(readinessOf(m, RULES, 'proxy')).toMatchObject({ ready: false, reason: 'hop_failing' });
    expect(readinessOf(m, RULES, 'router').ready).toBe(true);
    expect(readinessOf(m, RULES).ready).toBe(true);
  });

  it('a hop with one connection kind passing still serves (keep-alive only is degraded, not out)', () => {
    const m = memory('t', 'degraded', 'keepalive_only');
    slot(m, 'router', 'fresh', 0);
    slot(m, 'router', 'keepalive', 5);
    expect(readinessOf(m, RULES, 'router').ready).toBe(true);
  });
});

describe('the pool rule', () => {
  const r = (target: string, state: TargetStateName) => readinessOf(memory(target, state), RULES);

  it('takes a not-ready member out while another is ready', () => {
    const p = placeMembers(
      [
        { key: 'a', readiness: r('a', 'wedged') },
        { key: 'b', readiness: r('b', 'ok') },
      ],
      1,
      new Set(['a', 'b']),
    );
    expect(p.get('a')).toEqual({ inRotation: false, held: false });
    expect(p.get('b')).toEqual({ inRotation: true, held: false });
  });

  it('never takes the last one out: the member still in rotation is held, whatever the config order', () => {
    const members = [
      { key: 'a', readiness: r('a', 'wedged') },
      { key: 'b', readiness: r('b', 'wedged') },
    ];
    expect(placeMembers(members, 1, new Set(['b'])).get('b')).toEqual({ inRotation: true, held: true });
    expect(placeMembers(members, 1, new Set(['b'])).get('a')).toEqual({ inRotation: false, held: false });
    expect(placeMembers(members, 1, new Set(['a'])).get('a')?.held).toBe(true);
  });

  it('prefers a wedged member to a down one (a down port refuses every request)', () => {
    const p = placeMembers(
      [
        { key: 'a', readiness: r('a', 'down') },
        { key: 'b', readiness: r('b', 'wedged') },
      ],
      1,
      new Set(),
    );
    expect(p.get('b')?.held).toBe(true);
    expect(p.get('a')?.inRotation).toBe(false);
  });

  it('the view releases the held member once another recovers', () => {
    const view = new TrafficView({
      targets: ['a', 'b'].map((name) => ({ name, endpoints: ['router'], wedgeAfter: 2, downAfter: 2 })),
      readiness: { ready: ['ok', 'degraded'] },
      pools: [{ name: 'p', members: [{ target: 'a' }, { target: 'b' }], minInRotation: 1 }],
      now: () => 5_000,
    });
    view.update(memory('a', 'ok'));
    view.update(memory('b', 'ok'));
    view.update(memory('a', 'wedged'));
    view.update(memory('b', 'wedged'));
    expect(view.get('b')).toMatchObject({ inRotation: true, held: true, pool: 'p' });
    expect(view.get('a')).toMatchObject({ inRotation: false, held: false });
    view.update(memory('a', 'ok'));
    expect(view.get('b')).toMatchObject({ inRotation: false, held: false });
    expect(view.get('a')).toMatchObject({ inRotation: true, held: false });
  });
});

describe('the agent line (HAProxy configuration.txt, agent-check)', () => {
  const view = new TrafficView({
    targets: [{ name: 'a', endpoints: ['router'], wedgeAfter: 2, downAfter: 2 }],
    readiness: { ready: ['ok', 'degraded'] },
    pools: [],
    now: () => 5_000,
  });
  const answer = (state: TargetStateName, diagnosis: string | null = null) => {
    view.update(memory('a', state, diagnosis));
    return view.get('a')!;
  };

  it('up when ready, down with the state and diagnosis after # when not', () => {
    expect(agentReply(answer('ok'), { unready: 'down' }).line).toBe('up\n');
    expect(agentReply(answer('wedged', 'kv_bootstrap_thread_dead'), { unready: 'down' }).line).toBe(
      'down #wedged kv_bootstrap_thread_dead\n',
    );
  });

  it('in drain or maint mode says the admin word when out, and "ready" with "up" to undo it', () => {
    expect(agentReply(answer('wedged'), { unready: 'drain' }).line).toBe('drain\n');
    expect(agentReply(answer('down'), { unready: 'maint' }).line).toBe('maint\n');
    expect(agentReply(answer('ok'), { unready: 'drain' }).line).toBe('up ready\n');
  });

  it('a degraded weight while degraded, 100% again when ok', () => {
    expect(
      agentReply(answer('degraded', 'slow_first_token'), { unready: 'down', degradedWeight: 30 }).line,
    ).toBe('up 30% #degraded slow_first_token\n');
    expect(agentReply(answer('ok'), { unready: 'down', degradedWeight: 30 }).line).toBe('up 100%\n');
  });

  it('a description never carries a line end or a second #', () => {
    const line = agentReply(answer('wedged', 'log:evil#rule\r\nup'), { unready: 'down' }).line;
    expect(line).toBe('down #wedged log:evil rule up\n');
    expect(line.indexOf('\n')).toBe(line.length - 1);
  });
});
