// SGLang Mooncake KV-transfer signatures (disaggregation/mooncake/conn.py, SGLang 2025-05 → main 2026-08). Its
// ABORT handling logs only at DEBUG, so the visible signs are the failures below.
import type { RulePack } from './types.js';

export const mooncakePack: RulePack = {
  name: 'mooncake',
  engineLines: [],
  rules: [
    // mooncake/conn.py decode_thread failure reason (2025-05 → 2026-08).
    {
      name: 'mooncake_kvcache_fetch_failed',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'disaggregation/mooncake/conn.py decode_thread (2025-05 → 2026-08)',
      match: String.raw`Failed to get kvcache from prefill instance, it might be dead`,
    },
    // mooncake/conn.py transfer_worker re-raises this, which ends the thread: the python thread-death record
    // closes on this line and absorbs it (same incident); alone (python pack off) it still fires.
    {
      name: 'mooncake_transfer_thread_failed',
      severity: 'critical',
      class: 'thread_death',
      upstream: 'disaggregation/mooncake/conn.py transfer_worker (2025-05 → 2026-08)',
      incident: 'thread_death',
      // The error is bounded (1000: the most RE2 repeats, for mtail programs generated from the packs): `.*?` scanned the rest of the line after every copy of the literal (issue 24).
      match: String.raw`Transfer thread failed because of (?<error>.{0,1000}?)\. Prefill instance with bootstrap_port=(?<port>\d+) is dead`,
    },
    // mooncake/conn.py send_kvcache / transfer_worker (2025-06 → 2026-08): `Session {session} failed.` when the
    // Mooncake transfer engine reports a failed batch transfer to one decode session; the room is failed.
    {
      name: 'mooncake_session_failed',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'disaggregation/mooncake/conn.py transfer_worker (2025-06 → 2026-08)',
      match: String.raw`Session (?<session>[\w.:\[\]-]+) failed\.`,
    },
  ],
};
