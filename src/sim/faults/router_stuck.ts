// The router accepts chat requests and never forwards them (a stuck worker selection, a deadlocked admission
// queue): its in-flight gauge (smg_http_inflight_request_age_count) climbs while both engines run and queue
// nothing. /health still answers 200. Disabling the fault releases the held requests to run.
import type { FaultDef } from './types.js';

export const routerStuck: FaultDef = {
  name: 'router_stuck',
  summary: 'the router holds every chat request without forwarding it; engines idle, router /health 200',
  params: {},
  holdsRequest() {
    return true;
  },
  onDisable(ctl) {
    ctl.releaseStructured();
  },
};
