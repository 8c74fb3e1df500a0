// NIXL: SGLang's NIXL KV-transfer backend (disaggregation/nixl/conn.py, SGLang main 2026-08 with the wordings removed
// in 2026-05 kept for older builds) and the NIXL agent's own C++ error lines (ai-dynamo/nixl src/core, which every
// engine's NIXL connector runs: SGLang, vLLM, Dynamo). The rules of SGLang's common disaggregation code, which the
// NIXL backend runs too, are the `sglang_disagg` pack (./sglang-disagg.ts), which `nixl` brings along.
import type { RulePack } from './types.js';

export const nixlPack: RulePack = {
  name: 'nixl',
  engineLines: [],
  rules: [
    // The key incident: the prefill bootstrap thread died on an unguarded ABORT frame (builds with PR #27372
    // and without #30352, 2026-06 → 2026-07). threading.excepthook prints the header on stderr (unprefixed
    // for SGLang, `(Proc pid=N) ` or a container prefix elsewhere); the assertion is the traceback's last line.
    // nixl/conn.py NixlKVManager._start_bootstrap_thread: `assert waiting_req_bytes[0] == GUARD, f"First
    // message should be {GUARD}. Foreign traffic?"`.
    {
      name: 'nixl_bootstrap_thread_dead',
      severity: 'critical',
      class: 'kv_bootstrap_dead',
      upstream:
        'disaggregation/nixl/conn.py bootstrap_thread (2025-05 → 2026-08; ABORT frames 2026-06 → 2026-07)',
      incident: 'thread_death',
      // Bounded and greedy where the line is free text (issue 24: `.+?` and `.*?\s*$` were quadratic).
      match: String.raw`Exception in thread (?<thread>.{1,200}?) \((?<target>bootstrap_thread)\):\s*$`,
      follows: {
        match: String.raw`(?<exception>AssertionError): (?<message>First message should be b'NixlMsgGuard'.*\S)\s*$`,
        within: 30,
      },
    },
    // The assertion alone, for when the header went to another stream; absorbed by the record above.
    {
      name: 'nixl_guard_assertion',
      severity: 'critical',
      class: 'kv_bootstrap_dead',
      upstream: 'disaggregation/nixl/conn.py bootstrap_thread GUARD assert (2025-05 → 2026-08)',
      incident: 'thread_death',
      match: String.raw`AssertionError: First message should be b'NixlMsgGuard'`,
    },
    // nixl/conn.py transfer_worker (2026-03 → 2026-05, replaced by transfer_infos.get in PR #35281): a bare
    // assert inside a try the worker catches (`Unexpected transfer worker error for room N` + traceback).
    {
      name: 'nixl_transfer_infos_assert',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'disaggregation/nixl/conn.py transfer_worker (2026-03 → 2026-05)',
      incident: 'nixl_transfer_worker',
      match: String.raw`assert room in self\.transfer_infos`,
    },
    // nixl/conn.py transfer_worker logger.exception (2026-03 → 2026-08): caught, the room is marked failed.
    {
      name: 'nixl_unexpected_transfer_worker_error',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'disaggregation/nixl/conn.py transfer_worker (2026-03 → 2026-08)',
      incident: 'nixl_transfer_worker',
      perRequest: 'room',
      match: String.raw`Unexpected transfer worker error for room (?<room>\d+)`,
    },
    {
      name: 'nixl_transport_error',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'disaggregation/nixl/conn.py transfer_worker (2026-03 → 2026-08)',
      perRequest: 'room',
      match: String.raw`NIXL transport error for room (?<room>\d+)`,
    },
    // NIXL agent (ai-dynamo/nixl at 8770b655a6b17b5cdf7d2b56b6e0be5392496df5, src/core/nixl_agent.cpp; the error
    // lines date from PR #738, 2025-08). NIXL logs through absl (src/utils/common/nixl_log.h: NIXL_ERROR is
    // LOG(ERROR), NIXL_ERROR_FUNC prefixes `__FUNCTION__: `), so a line reads `E0821 20:48:50.123456 4242
    // nixl_agent.cpp:1190] postXferReq: remote agent '…' was disconnected after transfer request creation`.
    // nixl_agent.cpp:1190 postXferReq (NIXL_ERR_REMOTE_DISCONNECT), :1113 postXferReq and :1225 getXferStatus (the
    // remote's metadata was invalidated): the peer agent is gone and NIXL drops its metadata; every transfer to it
    // fails until it reconnects. One incident per burst (each in-flight handle prints it).
    {
      name: 'nixl_agent_remote_gone',
      severity: 'critical',
      class: 'connection_lost',
      upstream: 'nixl src/core/nixl_agent.cpp postXferReq/getXferStatus (NIXL 0.6 → main 2026-08)',
      incident: 'nixl_agent_peer_lost',
      match: String.raw`remote agent '(?<agent>[^'\n]{1,256})' was (?<how>disconnected|invalidated) (?:after transfer request creation|during transfer)`,
    },
    // nixl_agent.cpp:1195 postXferReq and :1238 getXferStatus: the backend (UCX, LIBFABRIC, …) failed one transfer
    // with a negative nixl_status_t; the caller (SGLang's transfer worker, vLLM's connector) fails or retries it.
    {
      name: 'nixl_agent_transfer_error',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'nixl src/core/nixl_agent.cpp postXferReq/getXferStatus (NIXL 0.6 → main 2026-08)',
      match: String.raw`backend '(?<backend>[^'\n]{1,64})' (?:failed to post the transfer request with|returned error) status (?<status>-?\d+)`,
    },
    // nixl_agent.cpp:575 makeConnection, :926 createXferReq, :635 prepXferDlist: `metadata for remote agent '…' not
    // found`. The engine-level handshake (metadata exchange) with that agent never completed or was invalidated,
    // so no transfer to it can even be created; no request id is printed.
    {
      name: 'nixl_agent_remote_metadata_missing',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'nixl src/core/nixl_agent.cpp makeConnection/createXferReq (NIXL 0.6 → main 2026-08)',
      match: String.raw`[Mm]etadata for remote agent '(?<agent>[^'\n]{1,256})' not found`,
    },
    // nixl_agent.cpp:1675 nixlAgentData::loadRemoteMD (under nixlAgent::loadRemoteMD): `error loading remote metadata for agent '…' with status N`, and
    // :1618/:1649/:1669 `failed to deserialize remote metadata`: the handshake's metadata did not load.
    {
      name: 'nixl_agent_load_metadata_failed',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'nixl src/core/nixl_agent.cpp loadRemoteMD (NIXL 0.6 → main 2026-08)',
      match: String.raw`error loading remote metadata for agent '(?<agent>[^'\n]{1,256})' with status (?<status>-?\d+)|failed to deserialize remote metadata`,
    },
    // nixl/conn.py send_metadata (≤ 2025-09), before the common receiver took over.
    {
      name: 'nixl_prefill_info_unreachable',
      severity: 'warning',
      class: 'connection_lost',
      upstream: 'disaggregation/nixl/conn.py send_metadata (2025-05 → 2025-09)',
      match: String.raw`Could not fetch prefill parallel info from bootstrap_addr`,
    },
    // Removed upstream in 2026-05 (heartbeat rewrite); kept for older builds.
    {
      name: 'nixl_room_failed_prefill_down',
      severity: 'warning',
      class: 'connection_lost',
      upstream: 'disaggregation/nixl/conn.py _handle_node_failure (2025-06 → 2026-05, removed)',
      perRequest: 'room',
      match: String.raw`Let room (?<room>\d+) be failed due to prefill down`,
    },
    {
      name: 'nixl_transfer_node_failure',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'disaggregation/nixl/conn.py NixlKVReceiver.poll (2025-06 → 2026-05, removed)',
      perRequest: 'room',
      match: String.raw`Transfer for room (?<room>\d+) failed due to node failure`,
    },
    {
      name: 'nixl_waiting_timeout',
      severity: 'warning',
      class: 'transfer_timeout',
      upstream: 'disaggregation/nixl/conn.py NixlKVReceiver.poll (2025-06 → 2026-05, removed)',
      perRequest: 'room',
      match: String.raw`Request (?<room>\d+) waiting_timeout`,
    },
  ],
};
