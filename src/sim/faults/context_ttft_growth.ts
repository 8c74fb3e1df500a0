// Time to first token grows with the prompt's context length, but only for requests on a reused keep-alive
// connection: a fresh connection is served at full speed. This is the multi-round harness hang (issue 29) that
// one-shot loads over fresh connections never reproduce: each round of a conversation resends a longer
// history over the same connection, and each waits longer for its first token, until (optionally) one hangs.
import type { FaultDef } from './types.js';

export const contextTtftGrowth: FaultDef = {
  name: 'context_ttft_growth',
  summary:
    'on a reused keep-alive connection, time to first token grows with the prompt length (fresh connections unaffected)',
  params: {
    ms_per_ktok: {
      default: 200,
      help: 'extra time to first token per 1000 prompt tokens on a reused connection, in ms (0 to 60000)',
    },
    hang_ktok: {
      default: 0,
      help: 'a reused-connection request of at least this many thousand prompt tokens gets no token at all until its client leaves (0: never)',
    },
  },
  validate(p) {
    const ms = Number(p.ms_per_ktok);
    const hang = Number(p.hang_ktok);
    if (!Number.isFinite(ms) || ms < 0 || ms > 60_000) return 'ms_per_ktok must be a number from 0 to 60000';
    if (!Number.isFinite(hang) || hang < 0) return 'hang_ktok must be a number ≥ 0 (0: never hang)';
    return undefined;
  },
  reusedConnectionDelayMs(promptTokens, p) {
    const hang = Number(p.hang_ktok);
    if (hang > 0 && promptTokens >= hang * 1000) return Infinity;
    return (Number(p.ms_per_ktok) * promptTokens) / 1000;
  },
  onDisable(ctl) {
    ctl.releaseStructured();
  },
};
