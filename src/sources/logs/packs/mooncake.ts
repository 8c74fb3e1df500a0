// Mooncake: SGLang's Mooncake KV-transfer backend (disaggregation/mooncake/conn.py, SGLang 2025-05 → main 2026-08; its
// ABORT handling logs only at DEBUG, so the visible signs are the failures below) and the Mooncake transfer engine's
// own glog lines (kvcache-ai/Mooncake mooncake-transfer-engine, which SGLang's backend, vLLM's MooncakeConnector and
// LMCache's Mooncake store all run). The common disaggregation rules are the `sglang_disagg` pack, brought along.
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
    // Mooncake transfer engine at 3b5a594133958449a1feaf1c9e0fc1b553e34a28 (2026-08-22), glog `E0822 13:12:18.123456
    // 4242 worker_pool.cpp:654] …`. rdma_transport/worker_pool.cpp:654 WorkerPool::performPollCq (v0.2.0 → main):
    // `Worker: Process failed for slice (opcode: N, source_addr: …, local_nic: …, peer_nic: …, …, retry_cnt: N,
    // max_retry_cnt: N): {ibv_wc_status_str}`. A work completion failed; the slice is retried on another rail up to
    // max_retry_cnt, then its transfer fails.
    {
      name: 'mooncake_te_slice_failed',
      severity: 'warning',
      class: 'transfer_failure',
      upstream:
        'mooncake-transfer-engine rdma_transport/worker_pool.cpp performPollCq (Mooncake v0.2.0 → 2026-08)',
      match: String.raw`Worker: Process failed for slice \(opcode: (?<opcode>\d+)`,
    },
    // transfer_metadata.cpp:1519 TransferMetadata::sendHandshake (2025-01 → 2026-08): `Handshake rejected by
    // {peer_server_name}: {reply_msg}`; the segment is not opened, so transfers to that peer fail.
    {
      name: 'mooncake_te_handshake_rejected',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'mooncake-transfer-engine transfer_metadata.cpp sendHandshake (2025-01 → 2026-08)',
      match: String.raw`Handshake rejected by (?<peer>[^\s:]{1,256}(?::\d+)?): `,
    },
    // rdma_transport/rdma_endpoint.cpp:1126-1227 RdmaEndPoint::doSetupConnection (2025-02 → 2026-08): `[Handshake]
    // Failed to modify QP to RTR, check mtu, gid, peer lid, peer qp num: local=…, peer=…` (and RESET/INIT/RTS). The
    // RDMA endpoint to that peer NIC is not set up.
    {
      name: 'mooncake_te_qp_setup_failed',
      severity: 'warning',
      class: 'transfer_failure',
      upstream:
        'mooncake-transfer-engine rdma_transport/rdma_endpoint.cpp doSetupConnection (2025-02 → 2026-08)',
      match: String.raw`Failed to modify QP to (?<state>RESET|INIT|RTR|RTS)\b`,
    },
  ],
};
