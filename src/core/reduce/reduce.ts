// The classifier: a pure reducer `(state, signal, now) → state'` per target (docs/design.md#states). No I/O,
// no clock of its own: the watchdog feeds it signals and ticks, and acts on the actions it returns. Each signal
// kind has its own part (slots.ts, evidence.ts, engines.ts); the verdict and its hysteresis run after every one.
import type { Signal } from '../signals.js';
import { evaluate } from '../verdict/evaluate.js';
import { judgeCrawl, rememberOwnCut } from './engine-evidence.js';
import { judgeObjectives, onProbeRate } from './objectives.js';
import { onEngine, judgeEngines, judgeRanks } from './engines.js';
import { confirmByHang, nextConfirmAt, onLog, pruneAborts } from './log-evidence.js';
import { applyVerdict } from './hysteresis.js';
import type { Action, ClassifierConfig, DetectEvent, Step, TargetMemory, TickSignal } from '../memory.js';
import { isCompletion } from '../vocabulary.js';
import { onProbe, rememberOwnIds } from './slots.js';
import { onNode } from './node.js';
import { judgeLost, onEngineProgress, onProbeLatency } from './progress.js';
import { noteServing } from './serving.js';

export function reduce(
  prev: TargetMemory,
  signal: Signal | TickSignal,
  now: number,
  cfg: ClassifierConfig,
): Step {
  return reduceInPlace(structuredClone(prev), signal, now, cfg);
}

/**
 * `reduce` on a state the caller owns and never looks back at: no copy. replay feeds a million batch lines through
 * the core, where the copy per signal was most of the cost (34.5 s of CPU on 1M lines).
 */
export function reduceInPlace(
  s: TargetMemory,
  signal: Signal | TickSignal,
  now: number,
  cfg: ClassifierConfig,
): Step {
  const events: DetectEvent[] = [];
  const actions: Action[] = [];
  if (signal.kind !== 'tick') s.counters.signals++;

  switch (signal.kind) {
    case 'probe':
      onProbe(s, signal, now, cfg, events);
      onProbeRate(s, signal.probeKind, signal.result, signal.tokensPerSecond, signal.start, now, cfg);
      onProbeLatency(s, signal, now, cfg);
      // Our own run timed out: the engines aborted its request and counted it; their abort counters discount it.
      if (signal.result === 'timeout' && isCompletion(cfg.probes[signal.probe]?.kind ?? signal.probeKind))
        rememberOwnCut(s, now);
      break;
    case 'log':
      onLog(s, signal, now, cfg, events, actions);
      break;
    case 'engine':
      onEngine(s, signal, now, cfg);
      onEngineProgress(s, signal, now);
      break;
    case 'tick':
      s.inflight = signal.inflight ?? [];
      for (const run of s.inflight) {
        rememberOwnIds(s, run.requestIds);
        // A completion in flight that got its first token: the engine served then.
        if (run.firstTokenMs !== undefined && isCompletion(cfg.probes[run.probe]?.kind))
          noteServing(s, run.startedAt + run.firstTokenMs);
      }
      break;
    case 'file_change':
      break;
    case 'node':
      onNode(s, signal, now, events);
      break;
  }

  confirmByHang(s, now, cfg, events);
  judgeEngines(s, now, cfg, events);
  judgeRanks(s, now, cfg, events);
  judgeCrawl(s, now, cfg, events);
  judgeObjectives(s, now, cfg);
  judgeLost(s, now, cfg);
  pruneAborts(s, now, cfg);
  const verdict = evaluate(s, now, cfg);
  s.verdict = verdict.state;
  const step = applyVerdict(s, verdict, now, cfg, events);
  // The node's story arrives after the verdict it explains (a stack dump is taken at the wedge): the cause of the
  // diagnosis shown is read again with it.
  if (signal.kind === 'node' && s.state === verdict.state && s.diagnosis === verdict.diagnosis)
    s.cause = verdict.cause;
  const wakeAt = nextConfirmAt(s, now, cfg);
  return { state: s, actions, events, transition: step, ...(wakeAt !== undefined ? { wakeAt } : {}) };
}
