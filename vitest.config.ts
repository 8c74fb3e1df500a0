import { defineConfig } from 'vitest/config';
import { lanes, mocksModules } from './test/lanes.js';
import LongestFirst from './test/sequencer.js';

// Two lanes (test/lanes.ts decides which file goes where, by rule): `npm run test:fast` runs `fast` (as two
// projects: the files that share one module graph per worker and the few that mock a module and need their own),
// `npm run test:e2e` runs `e2e`, `npm test` runs both. test/real/** has its own command and is in neither.
const lane = lanes();
const mocking = lane.fast.filter(mocksModules);

export default defineConfig({
  test: {
    environment: 'node',
    // Real processes and sockets on a shared 2-core machine: headroom, never a bound on speed.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two more forks than cores: the end-to-end files mostly wait on sockets, child processes and probe timers (a
    // quiet run used 0.8 of the 2 cores with 3 forks). Tried at load 11–20 from other suites (docs/decisions.md).
    maxWorkers: 4,
    // The longest files first (test/durations.json), so the lane does not end waiting on one started late.
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: lane.fast.filter((f) => !mocking.includes(f)),
          // Pure logic on the virtual clock: importing src/ once per worker, not once per file, is most of the
          // lane's time (import 48 s → 12 s on a quiet machine). A file that mocks a module runs isolated below.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'fast-mocks',
          include: mocking,
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
