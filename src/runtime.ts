// What the daemon runs for one loaded configuration: the sources and the detector. A reload builds a new
// runtime from the new config and only then stops the old one, so a bad config never leaves nothing running.
import type { LoadedConfig } from './config/load.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';

export interface Runtime {
  /** Stops every timer, watcher and socket the runtime owns. */
  stop(): Promise<void>;
}

export interface RuntimeContext {
  metrics: Metrics;
  logger: Logger;
  /** The runtime being replaced on reload, so state (log offsets, target states) can carry over. */
  previous?: Runtime;
}

export type RuntimeFactory = (loaded: LoadedConfig, ctx: RuntimeContext) => Promise<Runtime>;

export const createRuntime: RuntimeFactory = async (loaded, ctx) => {
  const log = ctx.logger.child({ component: 'runtime' });
  log.info({ targets: loaded.config.targets.map((t) => t.name) }, 'configuration active');
  return { stop: async () => {} };
};
