// Answers that finish in the wrong shape (EVIDENCE `format`): tool-call markup in the content or the reasoning, or
// reasoning that never stops. The completion finished, so the engine is not wedged: a parser, template or model
// problem. Both count on the slot's leak streak; the slot's last result says which.
import { candidate } from '../pick.js';
import { label } from '../text.js';
import type { Family } from '../types.js';

export const toolcallLeak: Family = (_s, _now, _cfg, sym) => {
  const leak = sym.completion.find((m) => m.leakStreak >= 1 && m.last?.result === 'toolcall_leak');
  return leak !== undefined
    ? [candidate('toolcall_leak', `${label(leak)}: tool call markup leaked into content`)]
    : [];
};

export const reasoningRunaway: Family = (_s, _now, _cfg, sym) => {
  const loop = sym.completion.find((m) => m.leakStreak >= 1 && m.last?.result === 'reasoning_runaway');
  return loop !== undefined
    ? [candidate('reasoning_runaway', `${label(loop)}: the model does not stop thinking`)]
    : [];
};
