// One part of the path fails while the rest passes (EVIDENCE `path`, degraded): only structured output (the
// grammar backend), only reused keep-alive connections (the proxy or LB), or one hop while the hop behind it passes.
// The long-input and conversation shapes are their own file (./probe-shapes.ts).
import type { SlotMemory } from '../../memory.js';
import { candidate } from '../pick.js';
import { label, why } from '../text.js';
import type { Candidate, Family } from '../types.js';

/**
 * Only structured output fails while other completions finish: the grammar backend, not the engine. "Only": every
 * other completion slot passed its whole window. An intermittent hang that lands on the structured probe (every
 * 2 m) twice in a row fails the chat and tool-call slots now and then as well; it is no grammar backend.
 */
export const structuredOutputStalled: Family = (_s, _now, _cfg, sym) => {
  const { completion, failing, passing } = sym;
  if (failing.length === 0 || !failing.every((m) => m.probeKind === 'structured')) return [];
  if (!passing.some((m) => m.probeKind !== 'structured')) return [];
  if (completion.some((m) => m.probeKind !== 'structured' && (m.recent ?? []).includes(1))) return [];
  return [
    candidate('structured_output_stalled', `${why(failing[0]!)}; completions without a response_format pass`),
  ];
};

/**
 * Reused connections fail where new ones pass: the failing keep-alive slot's failures in its window (at least
 * intermittentFailures of them) all went over a reused connection and no reused run passed since the first of
 * them, and the fresh slot of the same probe
 * and hop passed every run of a full window. Without that, a keep-alive slot that happens to fail
 * while its fresh twin passes is intermittence, not the proxy.
 */
export function reuseFails(
  keepalive: SlotMemory,
  fresh: SlotMemory,
  window: number,
  failures: number,
): boolean {
  const r = keepalive.recent ?? [];
  const reused = keepalive.recentReused ?? [];
  if (reused.length !== r.length || keepalive.last?.reusedConnection !== true) return false;
  const first = r.indexOf(1);
  if (first < 0) return false;
  // As many failures as the window needs to call anything a pattern: two in a row over reused connections beside
  // a clean fresh twin is what a fault that fails one request in N gives by chance (kv_transfer_failure at the
  // example cadence read keepalive_only before its counters named it). A proxy that stalls reused connections
  // fails every one of them, and has three in 45 s at 15 s chat probes.
  if (r.reduce((a, b) => a + b, 0) < failures) return false;
  for (let i = first; i < r.length; i++) if (reused[i] === 1 && r[i] === 0) return false;
  if (r.some((f, i) => f === 1 && reused[i] !== 1)) return false;
  // A full window of fresh passes: two keep-alive failures beside two fresh passes are what intermittence
  // looks like too, and a keepalive_only named that early would hold for the whole incident.
  const f = fresh.recent ?? [];
  return f.length >= window && !f.includes(1);
}

export const keepaliveOnly: Family = (_s, _now, cfg, sym) => {
  const { completion, failing, passing } = sym;
  for (const f of failing) {
    if (f.conn !== 'keepalive') continue;
    // Keep-alive *only*: every other completion slot on the hop passed its whole window too. An intermittent
    // hang whose period lines up with the probe rounds can fail the keep-alive slot every time, but it hits
    // the tool-call matrix or the canary on the same hop as well.
    const othersClean = completion.every(
      (m) => m === f || m.endpoint !== f.endpoint || !(m.recent ?? []).includes(1),
    );
    const fresh = passing.find(
      (p) =>
        othersClean &&
        p.conn === 'fresh' &&
        p.endpoint === f.endpoint &&
        p.probe === f.probe &&
        reuseFails(f, p, cfg.detect.intermittentWindow, cfg.detect.intermittentFailures),
    );
    if (fresh)
      return [candidate('keepalive_only', `${why(f)}; ${label(fresh)} passes: look at the proxy/LB`)];
  }
  return [];
};

/**
 * A hop whose completions fail while the next probed hop behind it passes; a hop whose own health fails while
 * completions through the hops behind it pass. That hop's problem, not the deployment's.
 */
export const hopFailing: Family = (_s, _now, cfg, sym) => {
  const out: Candidate[] = [];
  const { completion, failing } = sym;
  const hopState = (hop: string) => {
    const on = completion.filter((m) => m.endpoint === hop);
    if (on.length === 0) return 'none';
    if (on.some((m) => m.failStreak === 0)) return 'pass';
    return on.some((m) => m.failStreak >= cfg.detect.wedgeAfter) ? 'fail' : 'pending';
  };
  const probed = cfg.hops.filter((h) => hopState(h) !== 'none');
  for (let i = 0; i < probed.length - 1; i++) {
    if (hopState(probed[i]!) === 'fail' && hopState(probed[i + 1]!) === 'pass') {
      const f = failing.find((m) => m.endpoint === probed[i])!;
      out.push(candidate(`hop:${probed[i]}`, `${why(f)}; ${probed[i + 1]} behind it passes`));
      break;
    }
  }
  const h = sym.healthFailed;
  if (h !== undefined && sym.behindPasses(h.endpoint))
    out.push(candidate(`hop:${h.endpoint}`, `${why(h)}; completions through the hops behind it pass`));
  return out;
};
