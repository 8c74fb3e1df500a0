// The pool rule: backends that are not ready leave rotation, except that a pool never drops below its
// `minInRotation`: with every member wedged, taking the last one out turns a partial outage into a full one and
// hides the incident from the load balancer's own view. Pure; the view (view.ts) keeps which members it held.
import type { TargetStateName } from '../../core/vocabulary.js';
import type { Readiness } from './readiness.js';

export interface Placement {
  inRotation: boolean;
  /** Not ready, kept in rotation because the pool would otherwise fall below its minimum. */
  held: boolean;
}

/** Which not-ready member is the better one to keep: it may still serve some requests; `down` refuses them all. */
const KEEP_ORDER: readonly TargetStateName[] = ['ok', 'degraded', 'unknown', 'wedged', 'down'];

/**
 * Places each member (in config order). A member that was in rotation until now is kept before one already out:
 * the load balancer need not bring back a backend it has just taken out (and its health checks' rise and fall
 * would leave a moment with none in), and the one kept does not change while the pool stays bad.
 */
export function placeMembers(
  members: ReadonlyArray<{ key: string; readiness: Readiness }>,
  minInRotation: number,
  inBefore: ReadonlySet<string>,
): Map<string, Placement> {
  const out = new Map<string, Placement>();
  let inRotation = 0;
  for (const m of members) {
    out.set(m.key, { inRotation: m.readiness.ready, held: false });
    if (m.readiness.ready) inRotation++;
  }
  const need = Math.min(minInRotation, members.length) - inRotation;
  if (need <= 0) return out;
  const candidates = members
    .map((m, i) => ({ ...m, i }))
    .filter((m) => !m.readiness.ready)
    .sort(
      (a, b) =>
        Number(inBefore.has(b.key)) - Number(inBefore.has(a.key)) ||
        KEEP_ORDER.indexOf(a.readiness.state) - KEEP_ORDER.indexOf(b.readiness.state) ||
        a.i - b.i,
    );
  for (const m of candidates.slice(0, need)) out.set(m.key, { inRotation: true, held: true });
  return out;
}
