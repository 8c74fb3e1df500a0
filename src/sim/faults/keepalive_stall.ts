// A proxy that stalls responses on reused keep-alive connections while fresh connections are served:
// the "fresh is fast, reused stalls" incident that points at the proxy, not the engine.
import type { FaultDef } from './types.js';

export const keepaliveStall: FaultDef = {
  name: 'keepalive_stall',
  summary: 'the proxy hop holds responses to the 2nd+ request on a connection (needs the proxy hop)',
  params: {},
  validate(_params, ctl) {
    return ctl.hasProxy
      ? undefined
      : 'keepalive_stall needs the proxy hop: start the simulator with proxy: true';
  },
  stallsReusedConnection() {
    return true;
  },
  onDisable(ctl) {
    ctl.releaseHeld();
  },
};
