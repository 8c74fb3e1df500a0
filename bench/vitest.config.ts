// The TypeScript benches (page latency, alerts, drain, the engine-log corpus) run through vitest only to load TypeScript; they print figures,
// assert none.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['bench/page-latency.ts', 'bench/alerts-e2e.ts', 'bench/drain.ts', 'bench/issue40-corpus.ts'],
    environment: 'node',
    pool: 'forks',
    testTimeout: 900_000,
  },
});
