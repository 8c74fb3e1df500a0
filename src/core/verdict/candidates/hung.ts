// Completions hung (EVIDENCE `failing`, as a failure before its timeout fires): a run in flight hangAfter with none finished since it started, on any hop. No
// timeout needs to fire; nothing more specific named the hang.
import { candidate } from '../pick.js';
import type { Family } from '../types.js';

export const completionsHung: Family = (_s, _now, _cfg, sym) =>
  sym.hungText !== undefined ? [candidate('completions_hung', sym.hungText)] : [];
