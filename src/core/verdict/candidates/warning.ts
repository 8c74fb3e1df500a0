// A warning-class line that came with the incident (EVIDENCE `warning`): it names a wedge or a degradation the
// probes confirm (failing, hung or intermittent completions) when nothing stronger does. The line is circumstantial,
// so it ranks below the engine's state and the path, above the bare symptom (state/warnings.ts remembers them).
import { warningText } from '../../memory-read.js';
import { candidate } from '../pick.js';
import type { Family } from '../types.js';

export const incidentWarning: Family = (_s, _now, _cfg, sym) => {
  const w = sym.warned;
  const symptom = sym.wedgeText ?? sym.degradedText;
  if (w === undefined || symptom === undefined) return [];
  return [candidate(`warning:${w.class}`, `${symptom}; after ${warningText(w)}`)];
};
