// What the shapes need to know of the completions, from the same memory the verdict reads: whether a completion run
// has hung (in flight hangAfter) with nothing finished since it started.
import { hangs, isCompletion } from '../kinds.js';
import type { ClassifierConfig, TargetState } from '../state/memory.js';

export function hungWithNothingFinished(s: TargetState, now: number, cfg: ClassifierConfig): boolean {
  const hung = (s.inflight ?? []).filter(
    (r) => hangs(cfg.probes[r.probe]?.kind) && now - r.startedAt >= cfg.detect.hangAfter,
  );
  if (hung.length === 0) return false;
  const newest = Math.max(...hung.map((r) => r.startedAt));
  return !Object.values(s.slots).some(
    (m) =>
      isCompletion(m.probeKind) &&
      (m.last?.result === 'ok' || m.last?.result === 'toolcall_leak') &&
      m.last.start + m.last.durationMs > newest,
  );
}
