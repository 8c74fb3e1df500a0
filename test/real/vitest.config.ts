// The real-engine lane (issue 38): upstream llama-server built by scripts/real-llama/fixture.mjs. `npm run test:real`
// only; its files end in .real.ts, so no `*.test.ts` include (npm test, its lanes) ever picks them up. A cold
// cache fails the lane loudly with the command that warms it.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/real/**/*.real.ts'],
    environment: 'node',
    pool: 'forks',
    // One file at a time: each runs a real engine on both cores.
    maxWorkers: 1,
    fileParallelism: false,
    // Real time at the example cadence: a fault's detection and recovery take minutes, not seconds.
    testTimeout: 600_000,
    hookTimeout: 180_000,
  },
});
