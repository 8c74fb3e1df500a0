// The candidates for the long-input and conversation shapes (src/core/verdict/candidates/probe-shapes.ts), on plain slot memory.
import { describe, expect, it } from 'vitest';
import { failedRound, probeShapeCandidate } from '../../src/core/verdict/candidates/probe-shapes.js';
import type { ClassifierConfig, SlotMemory } from '../../src/core/memory.js';
import type { ProbeKind } from '../../src/core/vocabulary.js';

const cfg = {
  detect: {},
  hops: ['router'],
  probes: {
    chat: { kind: 'chat' },
    long: { kind: 'longinput', promptTokens: 8192 },
    talk: { kind: 'conversation', rounds: 4 },
    tools: { kind: 'toolcall' },
  },
} as unknown as ClassifierConfig;

const slot = (probe: string, kind: ProbeKind, failStreak: number, error?: string): SlotMemory => ({
  probe,
  probeKind: kind,
  endpoint: 'router',
  conn: kind === 'conversation' ? 'keepalive' : 'fresh',
  failStreak,
  okStreak: failStreak === 0 ? 2 : 0,
  slowStreak: 0,
  leakStreak: 0,
  last: { result: failStreak > 0 ? 'timeout' : 'ok', start: 0, durationMs: 1, ...(error ? { error } : {}) },
});

describe('probe shapes', () => {
  it('long prompts failing while chat passes: long_context_failing, the length named', () => {
    const v = probeShapeCandidate(
      [slot('long', 'longinput', 2, 'no first token within 60000 ms (a 8192-token prompt)')],
      [slot('chat', 'chat', 0)],
      cfg,
    );
    expect(v).toEqual({
      diagnosis: 'long_context_failing',
      evidence: 'path',
      rank: 3,
      fits: ['degraded'],
      cause:
        'long on router/fresh: timeout (no first token within 60000 ms (a 8192-token prompt)), 2 in a row; 8192-token prompts fail while chat on router/fresh passes',
    });
  });

  it('a conversation failing while chat passes: conversation_stalls, the round named', () => {
    const v = probeShapeCandidate(
      [slot('talk', 'conversation', 2, 'no first token within 30000 ms (round 3 of 4)')],
      [slot('chat', 'chat', 0)],
      cfg,
    );
    expect(v?.diagnosis).toBe('conversation_stalls');
    expect(v?.cause).toContain('the conversation stalls at round 3 of 4 on a keepalive connection');
    // A hang still in flight names no round yet: the cause says how many rounds the conversation has.
    const inflight = probeShapeCandidate(
      [slot('talk', 'conversation', 1, 'in flight for 20 s')],
      [slot('chat', 'chat', 0)],
      cfg,
    );
    expect(inflight?.cause).toContain('a conversation of 4 rounds stalls');
  });

  it('no shape when nothing short passes, or when other kinds fail too: the general verdict decides', () => {
    expect(probeShapeCandidate([slot('long', 'longinput', 2)], [], cfg)).toBeUndefined();
    // A passing conversation is no short completion for the long-input shape.
    expect(
      probeShapeCandidate([slot('long', 'longinput', 2)], [slot('talk', 'conversation', 0)], cfg),
    ).toBeUndefined();
    expect(
      probeShapeCandidate(
        [slot('long', 'longinput', 2), slot('tools', 'toolcall', 2)],
        [slot('chat', 'chat', 0)],
        cfg,
      ),
    ).toBeUndefined();
    expect(
      probeShapeCandidate(
        [slot('talk', 'conversation', 2), slot('chat', 'chat', 2)],
        [slot('tools', 'toolcall', 0)],
        cfg,
      ),
    ).toBeUndefined();
  });

  it('failedRound reads "round k of n" from the error', () => {
    expect(failedRound(slot('talk', 'conversation', 1, 'round 2 of 4: wrong answer'))).toBe('round 2 of 4');
    expect(failedRound(slot('talk', 'conversation', 1, 'HTTP 500'))).toBeUndefined();
  });
});
