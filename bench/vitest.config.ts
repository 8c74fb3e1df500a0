// The page-latency bench runs through vitest only to load TypeScript; it prints figures, asserts none.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['bench/page-latency.ts', 'bench/alerts-e2e.ts'],
    environment: 'node',
    pool: 'forks',
    testTimeout: 900_000,
  },
});
