// Answers that finish in the wrong shape (EVIDENCE `format`): tool-call markup in the content. The completion
// finished, so the engine is not wedged: a parser problem.
import { candidate } from '../pick.js';
import { label } from '../text.js';
import type { Family } from '../types.js';

export const toolcallLeak: Family = (_s, _now, _cfg, sym) => {
  const leak = sym.completion.find((m) => m.leakStreak >= 1);
  return leak !== undefined
    ? [candidate('toolcall_leak', `${label(leak)}: tool call markup leaked into content`)]
    : [];
};
