// The detection thresholds the core judges with (durations in ms), and the values a target gets when its config
// has no `detect:`. The core owns the shape; the config's `detectSchema` (src/config/schema.ts) parses YAML into it,
// and a compile-time check there keeps the two assignable. `replay` reads the defaults here without loading zod
// (a third of its start-up); test/config/detect-defaults.test.ts keeps them equal to `detectSchema.parse({})`.

export interface DetectSettings {
  readonly wedgeAfter: number;
  readonly recoverAfter: number;
  readonly downAfter: number;
  readonly stallAfter: number;
  readonly abortStormCount: number;
  readonly abortStormWindow: number;
  readonly confirmInterval: number;
  readonly confirmAfter: number;
  readonly hangAfter: number;
  readonly intermittentFailures: number;
  readonly intermittentWindow: number;
  readonly leakAfter: number;
  readonly crawlFraction: number;
  readonly failureCount: number;
  readonly failureWindow: number;
  readonly orphanAfter: number;
}

export const DETECT_DEFAULTS: DetectSettings = Object.freeze({
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
