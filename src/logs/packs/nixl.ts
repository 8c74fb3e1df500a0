// NIXL KV-transfer signatures (engine-signals.md §1.1, §1.3, §1.8).
import type { RulePack } from './types.js';

export const nixlPack: RulePack = {
  name: 'nixl',
  engineLines: [],
  rules: [
    // The key incident: the prefill bootstrap thread died on an unguarded ABORT frame. The header comes from
    // threading.excepthook on stderr, unprefixed; the assertion is the traceback's last line.
    {
      name: 'nixl_bootstrap_thread_dead',
      class: 'kv_bootstrap_dead',
      severity: 'critical',
      match: String.raw`^Exception in thread (?<thread>.+?) \((?<target>bootstrap_thread)\):\s*$`,
      follows: {
        match: String.raw`^(?<exception>AssertionError): (?<message>First message should be b'NixlMsgGuard'.*?)\s*$`,
        within: 30,
      },
    },
    // The assertion alone, for when the header went to another stream.
    {
      name: 'nixl_guard_assertion',
      class: 'kv_bootstrap_dead',
      severity: 'critical',
      match: String.raw`First message should be b'NixlMsgGuard'`,
    },
    {
      name: 'nixl_transfer_infos_assert',
      class: 'transfer_failure',
      severity: 'critical',
      match: String.raw`assert room in self\.transfer_infos`,
    },
    {
      name: 'nixl_unexpected_transfer_worker_error',
      class: 'transfer_failure',
      severity: 'warning',
      match: String.raw`Unexpected transfer worker error for room (?<room>\d+)`,
    },
    {
      name: 'nixl_transport_error',
      class: 'transfer_failure',
      severity: 'warning',
      match: String.raw`NIXL transport error for room (?<room>\d+)`,
    },
    {
      name: 'nixl_lost_prefill_connection',
      class: 'transfer_failure',
      severity: 'critical',
      match: String.raw`Lost connection with prefill instance \(bootstrap_addr: (?<addr>[^)\s]*)\)(?:, (?<affected>\d+) transfers affected)?`,
    },
    {
      name: 'nixl_room_failed_prefill_down',
      class: 'transfer_failure',
      severity: 'warning',
      match: String.raw`Let room (?<room>\d+) be failed due to prefill down`,
    },
    {
      name: 'nixl_transfer_node_failure',
      class: 'transfer_failure',
      severity: 'warning',
      match: String.raw`Transfer for room (?<room>\d+) failed due to node failure`,
    },
    {
      name: 'nixl_prefill_info_unreachable',
      class: 'transfer_failure',
      severity: 'warning',
      match: String.raw`Could not fetch prefill parallel info from bootstrap_addr`,
    },
    {
      name: 'nixl_waiting_timeout',
      class: 'transfer_timeout',
      severity: 'warning',
      match: String.raw`Request (?<room>\d+) waiting_timeout`,
    },
  ],
};
