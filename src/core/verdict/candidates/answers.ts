// Answers that finish but are wrong (EVIDENCE `answer`): a canary's known answer or a structured probe's schema,
// held by the slot's window of answers (../wrong-window.ts). Serving garbage is as bad as serving nothing.
import { wrongCause, wrongHeld } from '../../wrong-window.js';
import { candidate } from '../pick.js';
import { label } from '../text.js';
import type { Family } from '../types.js';

export const wrongOutput: Family = (_s, _now, _cfg, sym) => {
  const wrong = sym.completion.find(wrongHeld);
  return wrong !== undefined ? [candidate('wrong_output', wrongCause(wrong, label(wrong)))] : [];
};
