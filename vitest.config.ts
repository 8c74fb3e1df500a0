import { defineConfig } from 'vitest/config';
import { lanes } from './test/lanes.js';

// Two lanes (test/lanes.ts decides which file goes where, by rule): `npm run test:fast` runs `fast`,
// `npm run test:e2e` runs `e2e`, `npm test` runs both. test/real/** has its own command and is in neither.
const lane = lanes();

export default defineConfig({
  test: {
    environment: 'node',
    // Real processes and sockets on a shared 2-core machine: headroom, never a bound on speed.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One more fork than cores: the end-to-end files mostly wait on sockets, child processes and probe timers.
    maxWorkers: 3,
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: lane.fast,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: lane.e2e,
        },
      },
    ],
  },
});
