// Probe kinds and the other constants the runtime needs from the config's vocabulary, free of zod: probes and
// routes loaded by `run` import them from here, so the daemon's isolate never loads the schema (schema.ts
// re-exports them).
import {
  completionKinds,
  CONN_KINDS,
  PROBE_KINDS as KIND_TRAITS,
  type ProbeKind,
} from '../core/vocabulary.js';
import type { ProbeConfig } from './schema.js';

export { CONN_KINDS };

/** The probe kinds, from the vocabulary (a tuple: zod's enums want at least one). */
export const PROBE_KIND_NAMES = Object.keys(KIND_TRAITS) as [ProbeKind, ...ProbeKind[]];

/** The kinds whose traits say they run a completion. */
export type CompletionKind = {
  [K in ProbeKind]: (typeof KIND_TRAITS)[K]['completion'] extends true ? K : never;
}[ProbeKind];

/** Kinds that run a completion through the engine (the ones that cost engine work and can trip an abort). */
export const COMPLETION_KINDS = completionKinds() as readonly CompletionKind[];

export { TOOL_CASES } from './tool-cases.js';

/** The minimum time between two on-demand runs of a completion probe (see `onDemandInterval`). */
export function onDemandInterval(p: ProbeConfig): number {
  if ('onDemandInterval' in p && p.onDemandInterval !== undefined) return p.onDemandInterval;
  return p.every ?? 60_000;
}
