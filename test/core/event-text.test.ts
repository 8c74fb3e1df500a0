// One wording per detector event (src/core/event-text.ts): the daemon's journal and replay's timeline print the
// same words for the same event, so what a person reads in `replay` is what the journal said during the incident.
import { describe, expect, it } from 'vitest';
import { eventText } from '../../src/core/event-text.js';
import type { DetectEvent } from '../../src/core/memory.js';

describe('event text', () => {
  const stall: DetectEvent = {
    type: 'engine_stalled',
    at: 0,
    service: 'decode',
    running: 3,
    queued: 0,
    transferQueue: 2,
    preallocQueue: 0,
    sinceMs: 61_400,
  };

  it('names only the queues that hold something, and a throughput only when one was seen', () => {
    expect(eventText(stall)).toBe('engine_stalled: 3 running, 2 in transfer for 61 s on decode');
    expect(eventText(stall, { tokensPerSecond: 0.2 })).toBe(
      'engine_stalled: 3 running, 2 in transfer, 0 tokens/s for 61 s on decode',
    );
  });

  it('a critical line is its first line and its root cause, never the rest of a traceback', () => {
    const e: DetectEvent = {
      type: 'critical_log',
      at: 0,
      service: 'prefill',
      rule: 'nixl_bootstrap_thread_dead',
      diagnosis: 'kv_bootstrap_thread_dead',
      line: 'Exception in thread Thread-1 (bootstrap_thread):\nTraceback (most recent call last):',
      rootCause: "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
    };
    expect(eventText(e)).toBe(
      "prefill: nixl_bootstrap_thread_dead: Exception in thread Thread-1 (bootstrap_thread): (root cause: AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?)",
    );
  });
});
