// The detection settings a target gets when its config has no `detect:` (what detectSchema.parse({}) returns), as
// plain values: `replay` needs them for its verdict timeline, and loading zod for them was a third of its
// start-up. A test keeps the two equal.
import type { DetectConfig } from './schema.js';

export const DETECT_DEFAULTS: Readonly<DetectConfig> = Object.freeze({
  wedgeAfter: 2,
  recoverAfter: 2,
  downAfter: 2,
  stallAfter: 60_000,
  abortStormCount: 20,
  abortStormWindow: 60_000,
  confirmInterval: 10_000,
  confirmAfter: 5_000,
  hangAfter: 20_000,
  intermittentFailures: 3,
  intermittentWindow: 10,
  leakAfter: 600_000,
  crawlFraction: 0.1,
  failureCount: 3,
  failureWindow: 60_000,
  orphanAfter: 600_000,
});
