// Route plugins that need the daemon (its runtime, config). Each feature adds its plugin factory here.
import type { FastifyPluginAsync } from 'fastify';
import type { Daemon } from '../daemon.js';

export const routePlugins: ((daemon: Daemon) => FastifyPluginAsync)[] = [];
