// Mooncake KV-transfer signatures (engine-signals.md §1.2, §1.3, §1.8). Its ABORT handling logs only at
// DEBUG, so the visible signs are the failures below.
import type { RulePack } from './types.js';

export const mooncakePack: RulePack = {
  name: 'mooncake',
  engineLines: [],
  rules: [
    {
      name: 'mooncake_kvcache_fetch_failed',
      class: 'transfer_failure',
      severity: 'warning',
      match: String.raw`Failed to get kvcache from prefill instance, it might be dead`,
    },
    // The transfer worker re-raises this, which ends the thread (a python_thread_exception follows).
    {
      name: 'mooncake_transfer_thread_failed',
      class: 'thread_death',
      severity: 'critical',
      match: String.raw`Transfer thread failed because of (?<error>.*?)\. Prefill instance with bootstrap_port=(?<port>\d+) is dead`,
    },
  ],
};
