// Probe kinds by name: a new kind is a new file plus one entry here.
import type { ConnKind, ProbeKind } from '../signals.js';
import { chatProbe } from './chat.js';
import { healthProbe } from './health.js';
import { serverinfoProbe } from './serverinfo.js';
import { toolcallProbe } from './toolcall.js';
import type { ProbeFn } from './types.js';

export const PROBES: Record<ProbeKind, { run: ProbeFn; defaultConn: ConnKind[] }> = {
  chat: { run: chatProbe, defaultConn: ['fresh', 'keepalive'] },
  toolcall: { run: toolcallProbe, defaultConn: ['fresh', 'keepalive'] },
  health: { run: healthProbe, defaultConn: ['fresh'] },
  serverinfo: { run: serverinfoProbe, defaultConn: ['fresh'] },
};
