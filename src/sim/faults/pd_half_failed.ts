// SGLang PD: one leg of the pair goes down (its port closes) and the router, instead of failing fast, holds the
// requests it already paired with it: decode waits on a prefill that is gone until its bootstrap timeout (SGLang
// PD: SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT, 300 s), so the router's in-flight gauge climbs while the other leg
// is up and idle. Disabling brings the leg back and releases the held requests to run.
import { serviceParam, type FaultDef, type ServiceName } from './types.js';

export const pdHalfFailed: FaultDef = {
  name: 'pd_half_failed',
  summary: 'one PD leg is down while the router holds the requests paired with it; the other leg is up',
  params: { leg: { default: 'prefill', help: 'the leg that goes down: prefill or decode' } },
  validate(p) {
    return serviceParam({ service: p.leg }, ['prefill', 'decode']);
  },
  async onEnable(ctl, p) {
    await ctl.crashService(p.leg as ServiceName);
  },
  holdsRequest() {
    return true;
  },
  async onDisable(ctl, p) {
    await ctl.restartService(p.leg as ServiceName);
    ctl.releaseStructured();
  },
};
