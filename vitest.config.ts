import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Integration tests open real sockets and spawn processes; 2-core CI machines need headroom.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One more fork than cores: the longest files (simulator and daemon end to end, 1–2 min each) mostly wait
    // on probe timers, and with two forks they left the suite over CI's ~8 minutes (624 s at 4be94cd).
    maxWorkers: 3,
  },
});
