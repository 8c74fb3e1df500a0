// NIXL builds with PR #27372 (decode sends an unguarded ABORT frame) but without #30352 (prefill handles it):
// prefill's bootstrap_thread hits its GUARD assertion and dies, and the process carries on
// (disaggregation/nixl/conn.py).
import type { FaultDef } from './types.js';

export const nixlAbortUnhandled: FaultDef = {
  name: 'nixl_abort_unhandled',
  summary:
    "an ABORT frame kills prefill's NIXL bootstrap_thread; requests then hang in KVPoll.WaitingForInput",
  params: {},
  onAbortFrame(ctl) {
    ctl.killBootstrapThread();
  },
};
