// Probe kinds by name: a new kind is a new file plus one entry here.
import type { ProbeConfig, ProbeOf } from '../../config/schema.js';
import type { ConnKind, ProbeKind } from '../../core/signals.js';
import { canaryProbe } from './canary.js';
import { chatProbe } from './chat.js';
import { conversationProbe } from './conversation.js';
import { healthProbe } from './health.js';
import { longinputProbe } from './longinput.js';
import { serverinfoProbe } from './serverinfo.js';
import { structuredProbe } from './structured.js';
import { toolcallProbe } from './toolcall.js';
import type { ProbeContext, ProbeFn, ProbeOutcome } from './types.js';

export const PROBES: { [K in ProbeKind]: { run: ProbeFn<ProbeOf<K>>; defaultConn: ConnKind[] } } = {
  chat: { run: chatProbe, defaultConn: ['fresh', 'keepalive'] },
  // A tool-call run's cells share its connection: the first opens it, the other six go over it reused. One slot
  // covers both kinds; a keep-alive slot as well would double the matrix's completions on the user's GPUs (840
  // instead of 420 an hour at the example cadence) to find what the chat probe's keep-alive slot already finds.
  toolcall: { run: toolcallProbe, defaultConn: ['fresh'] },
  health: { run: healthProbe, defaultConn: ['fresh'] },
  serverinfo: { run: serverinfoProbe, defaultConn: ['fresh'] },
  // Answer checks judge the engine's output, not the connection path: one connection kind is enough.
  canary: { run: canaryProbe, defaultConn: ['fresh'] },
  structured: { run: structuredProbe, defaultConn: ['fresh'] },
  // A long prompt tests the engine's prefill, not the path: one connection kind is enough.
  longinput: { run: longinputProbe, defaultConn: ['fresh'] },
  // Rounds over one reused connection are the point (a fresh one per run opens it, the rounds reuse it).
  conversation: { run: conversationProbe, defaultConn: ['keepalive'] },
};

/** Runs a probe of any kind with its own kind's function (TypeScript cannot correlate `PROBES[kind]` with `probe`). */
export function runKind(ctx: ProbeContext<ProbeConfig>): Promise<ProbeOutcome> {
  const run = PROBES[ctx.probe.kind].run as ProbeFn<ProbeConfig>;
  return run(ctx);
}
