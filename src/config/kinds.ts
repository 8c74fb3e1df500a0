// Probe kinds and the other constants the runtime needs from the config's vocabulary, free of zod: probes and
// routes loaded by `run` import them from here, so the daemon's isolate never loads the schema (schema.ts
// re-exports them).
import type { ProbeConfig } from './schema.js';

export const CONN_KINDS = ['fresh', 'keepalive'] as const;
export const PROBE_KINDS = ['chat', 'toolcall', 'health', 'serverinfo', 'canary', 'structured'] as const;

/** Kinds that run a completion through the engine (the ones that cost engine work and can trip an abort). */
export const COMPLETION_KINDS = ['chat', 'toolcall', 'canary', 'structured'] as const;

export { TOOL_CASES } from '../probes/tool-cases.js';

/** Whether a probe kind runs a completion through the engine. */
export function isCompletionKind(kind: string): boolean {
  return (COMPLETION_KINDS as readonly string[]).includes(kind);
}

/** The minimum time between two on-demand runs of a completion probe (see `onDemandInterval`). */
export function onDemandInterval(p: ProbeConfig): number {
  if ('onDemandInterval' in p && p.onDemandInterval !== undefined) return p.onDemandInterval;
  return p.every ?? 60_000;
}
