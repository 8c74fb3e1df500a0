// A service process dies: its port closes. Restarting the service (or disabling the fault) brings it back.
import { SERVICE_NAMES, serviceParam, type FaultDef, type ServiceName } from './types.js';

export const crash: FaultDef = {
  name: 'crash',
  summary: "closes a service's port; restarting the service (or disabling the fault) brings it back",
  params: {
    service: { default: 'prefill', help: 'the service that dies: prefill, decode, router or proxy' },
  },
  validate(p, ctl) {
    if (p.service === 'proxy' && !ctl.hasProxy)
      return 'service proxy: the simulator runs without the proxy hop';
    return serviceParam(p, SERVICE_NAMES);
  },
  async onEnable(ctl, p) {
    await ctl.crashService(p.service as ServiceName);
  },
  async onDisable(ctl, p) {
    await ctl.restartService(p.service as ServiceName);
  },
};
