// The state from the symptoms, before any diagnosis is chosen: down when the server is gone, wedged when it answers
// but serves nothing, degraded when some evidence fits a degradation, else nothing to say (ok or unknown).
import type { TargetStateName } from '../vocabulary.js';
import type { Candidate, Symptoms } from './types.js';

export function stateOf(sym: Symptoms, candidates: readonly Candidate[]): TargetStateName | undefined {
  // A half-failed PD pair comes before `down`: one refused leg while the router and the other leg answer is that
  // pair's failure, not a dead target.
  if (sym.pair !== undefined) return 'wedged';
  // /health fails on a live server and completions fail with none passing: a wedge a restart fixes, not `down`.
  if (sym.healthGenerate) return 'wedged';
  // down: the health endpoint fails (no live server, or no completion probe to say more), or a port refuses.
  // A health check that times out with nothing else answering (a frozen process) is not a refused port: with
  // completion probes, they decide (a wedge when they hang or fail everywhere).
  if (sym.health !== undefined && ((!sym.alive && !sym.silent) || sym.completion.length === 0)) return 'down';
  if (sym.refused !== undefined) return 'down';
  // wedged: a confirmed critical signature until completions pass again everywhere (the engine was restarted);
  // completions failing on every slot or hung with nothing finished since; most runs failing on every slot with
  // passes in between (the streaks come and go, the wedge stays); or, with no completion passing, the router
  // holding requests no engine works on or an engine holding work with no progress (a stall alone is a wedge only
  // then: gauges can freeze on an idle engine).
  // A saturated engine's waits are no wedge (sym.stuck leaves them out): neither are the failures they cause.
  if (sym.confirmedHolds || sym.stuck || (sym.flaky?.wedged === true && sym.saturated === undefined))
    return 'wedged';
  if (sym.passing.length === 0 && (sym.stuckRouter !== undefined || sym.stalled)) return 'wedged';
  return candidates.some((c) => c.fits.includes('degraded')) ? 'degraded' : undefined;
}
