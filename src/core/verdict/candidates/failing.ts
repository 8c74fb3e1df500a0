// Completions, health or ports failing with nothing more specific (EVIDENCE `failing`): completions failing on every
// slot (wedged) or on some (degraded), health failing (down with no live server or no completion probe, degraded
// while completions pass), a port refusing (down).
import { candidate } from '../pick.js';
import { why } from '../text.js';
import type { Candidate, Family } from '../types.js';

export const completionsFailing: Family = (_s, _now, _cfg, sym) => {
  const f = sym.failing[0];
  // Saturation explains these failures: every failing slot timed out waiting for a slot on an engine loaded by others
  // (./saturation.ts busyEngine). One of our probes admitted meanwhile made the rest read as failing (`failing`
  // outranks `load`): bench:detect vllm_saturation went degraded/completions_failing on a still-saturated engine.
  if (f === undefined || sym.saturated !== undefined) return [];
  return [
    candidate('completions_failing', why(f), { fits: [sym.passing.length === 0 ? 'wedged' : 'degraded'] }),
  ];
};

export const healthFailing: Family = (_s, _now, _cfg, sym) => {
  const out: Candidate[] = [];
  const h = sym.health;
  // A live server whose completions still pass somewhere is degraded, never down: a completion slot that last ran
  // before the fault must not turn a 503 into `down` for a round.
  if (h !== undefined && ((!sym.alive && !sym.silent) || sym.completion.length === 0))
    out.push(candidate('health_failing', why(h), { fits: ['down'] }));
  const d = sym.healthFailed;
  if (d !== undefined && !sym.behindPasses(d.endpoint))
    out.push(candidate('health_failing', why(d), { fits: ['degraded'] }));
  return out;
};

export const connectionRefused: Family = (_s, _now, _cfg, sym) =>
  sym.refused !== undefined ? [candidate('connection_refused', why(sym.refused))] : [];
