// Critical log lines (EVIDENCE `signature`): a line that names the failure itself. A confirmed one holds until every
// completion passes again after it; one logged since the target was last ok names a wedge of every completion
// (failing or hung) before its confirmation round comes back. Among lines, the most specific (diagnosisRank: the
// bootstrap thread death above a built-in rule, a user rule below both); among equals the confirmed one.
import { diagnosisRank, mostSpecific } from '../../log-classes.js';
import { candidate } from '../pick.js';
import { withSymptom, lineText, why } from '../text.js';
import type { Candidate, Family } from '../types.js';

export const criticalLines: Family = (s, _now, _cfg, sym) => {
  const out: Candidate[] = [];
  const c = s.confirmedCritical;
  if (c !== undefined && sym.confirmedHolds) {
    // The router's half-failed pair comes first in the cause: the line (decode lost its prefill) says why it holds.
    const cause =
      sym.pair !== undefined
        ? `${sym.pair}; after ${lineText(c)}`
        : sym.healthGenerate && sym.health !== undefined
          ? `${lineText(c)}, confirmed; ${why(sym.health)}`
          : `${lineText(c)}, confirmed by a failing or hung probe`;
    out.push(candidate(c.diagnosis, cause, { fits: ['wedged'], rank: diagnosisRank(c) }));
  }
  const since = sym.stuck ? mostSpecific(s.criticalSinceOk) : undefined;
  // The same line as the confirmed one ties with it, and the confirmed one, asked first, names it.
  if (since !== undefined) {
    out.push(
      candidate(since.diagnosis, withSymptom(sym.wedgeText, `after ${lineText(since)}`), {
        fits: ['wedged'],
        rank: diagnosisRank(since),
      }),
    );
  }
  return out;
};
