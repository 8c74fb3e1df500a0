// A service's /health answers 503 (an engine still starting, shutting down, or with a failed health_generate).
import { SERVICE_NAMES, serviceParam, type FaultDef } from './types.js';

export const healthFail: FaultDef = {
  name: 'health_fail',
  summary: "a service's /health answers 503 while it keeps serving",
  params: {
    service: {
      default: 'prefill',
      help: 'the service whose /health fails: prefill, decode, router or proxy',
    },
  },
  validate(p, ctl) {
    if (p.service === 'proxy' && !ctl.hasProxy)
      return 'service proxy: the simulator runs without the proxy hop';
    return serviceParam(p, SERVICE_NAMES);
  },
  healthStatus(service, p) {
    return service === p.service ? 503 : undefined;
  },
};
