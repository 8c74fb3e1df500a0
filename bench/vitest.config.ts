// The page-latency, alerts and issue-40 corpus benches run through vitest only to load TypeScript; they print figures,
// assert none.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['bench/page-latency.ts', 'bench/alerts-e2e.ts', 'bench/issue40-corpus.ts'],
    environment: 'node',
    pool: 'forks',
    testTimeout: 900_000,
  },
});
