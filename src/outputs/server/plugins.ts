// Route plugins that need the daemon (its runtime, config). Each feature adds its plugin factory here.
import type { FastifyPluginAsync } from 'fastify';
import type { DaemonView } from './daemon-view.js';
import { daemonIncidentRoutes } from './incident-routes.js';
import { probeRoutes } from './probe-routes.js';
import { daemonRemediationRoutes } from './remediation-routes.js';
import { statusPageRoutes } from './status-page-route.js';
import { daemonStatusRoutes } from './status-routes.js';
import { readyRoutes } from './ready-routes.js';

export const routePlugins: ((daemon: DaemonView) => FastifyPluginAsync)[] = [
  probeRoutes,
  statusPageRoutes,
  daemonRemediationRoutes,
  daemonStatusRoutes,
  daemonIncidentRoutes,
  (daemon) =>
    readyRoutes({
      traffic: () => daemon.runtime?.traffic?.view,
      targets: () => daemon.loaded.config.targets.map((t) => t.name),
    }),
];
