// Answers that finish but are wrong (EVIDENCE `answer`): a canary's known answer or a structured probe's schema,
// held by the slot's window of answers (../wrong-window.ts). Serving garbage is as bad as serving nothing.
import { wrongCause, wrongHeld } from '../../wrong-window.js';
import { candidate } from '../pick.js';
import { label } from '../text.js';
import type { Family } from '../types.js';

export const wrongOutput: Family = (_s, _now, _cfg, sym) => {
  const wrong = sym.completion.find(wrongHeld);
  if (wrong === undefined) return [];
  // A canary that never once answered right says something wrong_output does not: the model may be unable to pass
  // it (a small or quirky model held wrong_output from the start with nothing saying so, issue 38). Its own name, so
  // the operator checks the canary and the model before hunting a fault that was never there.
  if (wrong.probeKind === 'canary' && wrong.answeredRight !== true) {
    return [
      candidate(
        'canary_never_passed',
        `${label(wrong)} has not answered right once since wedgewatch started: ${wrong.lastWrong ?? 'wrong output'}`,
      ),
    ];
  }
  return [candidate('wrong_output', wrongCause(wrong, label(wrong)))];
};
