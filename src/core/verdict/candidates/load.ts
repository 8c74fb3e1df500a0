// Answers that finish, late or aborted in numbers (EVIDENCE `load`): first tokens over their objective, and abort
// lines storming. The engines' own abort counters are the third (./counters.ts).
import { candidate } from '../pick.js';
import { label } from '../text.js';
import type { Family } from '../types.js';

export const slow: Family = (_s, _now, cfg, sym) => {
  const m = sym.completion.find((x) => x.slowStreak >= cfg.detect.wedgeAfter);
  if (m === undefined) return [];
  const objective = cfg.probes[m.probe]?.ttftObjective;
  const late = m.last!.ttftMs === undefined && m.last!.error !== undefined;
  return [
    candidate(
      'slow',
      late
        ? `${label(m)}: no answer ${m.last!.error}, over its ${objective} ms time-to-first-token objective`
        : `${label(m)}: time to first token ${Math.round(m.last!.ttftMs ?? 0)} ms over its ${objective} ms objective, ${m.slowStreak} in a row`,
    ),
  ];
};

export const abortLines: Family = (s, _now, cfg) =>
  s.aborts.length >= cfg.detect.abortStormCount
    ? [candidate('abort_storm', `${s.aborts.length} aborts within ${cfg.detect.abortStormWindow / 1000} s`)]
    : [];
