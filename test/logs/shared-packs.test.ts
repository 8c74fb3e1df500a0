// Issue 27 items 6 and 8: rules of code several backends share live in a pack named for that code (torch's
// collectives in `torch`, SGLang's disaggregation common code in `sglang_disagg`), configs naming the old packs
// keep every rule they had, and each new rule's near-misses (the upstream lines printed around it, or the same
// words in another shape) raise nothing of it. That each fixture raises exactly its rule is
// test/logs/corpora.test.ts; linearity and user-text carriers cover every fixture by construction.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LOG_PACKS,
  IMPLIED_PACKS,
  LOG_PACKS,
  logSourceSchema,
  withImpliedPacks,
  type LogPack,
} from '../../src/config/schema.js';
import { PACKS } from '../../src/sources/logs/packs/index.js';
import { compileRuleSet } from '../../src/sources/logs/rules/compile.js';
import type { RuleMatch } from '../../src/sources/logs/rules/matcher.js';
import { ChunkScanner } from '../../src/sources/logs/scanner.js';
import { RULE_FIXTURES } from '../fixtures/logs/rule-fixtures.js';

function scan(packs: readonly LogPack[], text: string): RuleMatch[] {
  const out: RuleMatch[] = [];
  const s = new ChunkScanner(compileRuleSet(packs, []), 65_536, {
    match: (m) => out.push(m),
    engine: () => {},
    truncated: () => {},
  });
  const buf = Buffer.from(text);
  s.feed(buf, buf.length);
  s.flush();
  return out;
}
const names = (packs: readonly LogPack[], text: string) => scan(packs, `${text}\n`).map((m) => m.rule.name);
const ALL = [...LOG_PACKS];
const packsOf = (packs: unknown) =>
  logSourceSchema.parse({ service: 's', path: '/var/log/x.log', ...(packs === undefined ? {} : { packs }) })
    .packs;

describe('shared code has its own pack (issue 27 item 6)', () => {
  it('the NCCL/torch rules are in the engine-neutral torch pack, not an engine pack', () => {
    const torch = PACKS.torch.rules.map((r) => r.name);
    expect(torch).toContain('torch_nccl_watchdog_timeout');
    // No other pack claims a torch collective (by what it means or where it was read from).
    for (const p of LOG_PACKS.filter((x) => x !== 'torch'))
      expect(
        PACKS[p].rules.filter((r) => r.class === 'collective_timeout' || r.upstream.includes('torch/csrc/')),
      ).toEqual([]);
  });

  it("SGLang's common disaggregation rules are in sglang_disagg, not in a backend's pack", () => {
    const backends = [...PACKS.nixl.rules, ...PACKS.mooncake.rules];
    expect(backends.filter((r) => r.upstream.startsWith('disaggregation/common/'))).toEqual([]);
    expect(PACKS.sglang_disagg.rules.map((r) => r.name)).toContain('sglang_disagg_lost_prefill_connection');
  });

  it("LMCache's lines are in the lmcache pack, not in an engine's", () => {
    expect(PACKS.lmcache.rules.map((r) => r.name)).toEqual(
      expect.arrayContaining(['lmcache_retrieve_short', 'lmcache_store_alloc_failed']),
    );
    for (const p of LOG_PACKS.filter((x) => x !== 'lmcache'))
      expect(PACKS[p].rules.filter((r) => /\blmcache\//.test(r.upstream))).toEqual([]);
  });

  it('a config naming the old packs keeps every rule it had: the shared packs come along', () => {
    expect(packsOf(['sglang', 'nixl', 'python'])).toEqual([
      'sglang',
      'sglang_disagg',
      'nixl',
      'torch',
      'python',
    ]);
    // `vllm` brings LMCache's pack, where its LMCache retrieve rule now lives (renamed lmcache_retrieve_short).
    expect(packsOf(['vllm', 'python'])).toEqual(['vllm', 'lmcache', 'torch', 'python']);
    expect(compileRuleSet(packsOf(['vllm']), []).rules.map((r) => r.name)).toContain(
      'lmcache_retrieve_short',
    );
    expect(packsOf(['mooncake'])).toEqual(['sglang_disagg', 'mooncake']);
    // An explicit empty list stays empty (a router's log with user rules only), and so do the engine-neutral packs.
    expect(packsOf([])).toEqual([]);
    expect(packsOf(['torch', 'rust'])).toEqual(['torch', 'rust']);
    // The default reads everything but the vLLM pack, each pack once and in match order.
    expect(packsOf(undefined)).toEqual(LOG_PACKS.filter((p) => p !== 'vllm'));
    expect(new Set(DEFAULT_LOG_PACKS).size).toBe(DEFAULT_LOG_PACKS.length);
    for (const [p, implied] of Object.entries(IMPLIED_PACKS))
      for (const q of implied) expect(withImpliedPacks([p as LogPack])).toContain(q);
  });

  it("a Mooncake deployment's packs raise the lost-prefill critical; the vLLM example's the NCCL timeout", () => {
    const lost = RULE_FIXTURES.sglang_disagg_lost_prefill_connection![0]!;
    expect(names(packsOf(['sglang', 'mooncake', 'python']), lost)).toEqual([
      'sglang_disagg_lost_prefill_connection',
    ]);
    expect(names(packsOf(['mooncake']), lost)).toEqual(['sglang_disagg_lost_prefill_connection']);
    const nccl = RULE_FIXTURES.torch_nccl_watchdog_timeout![0]!;
    expect(names(packsOf(['vllm', 'python']), nccl)).toEqual(['torch_nccl_watchdog_timeout']);
    // Without the implication (the packs as listed) the old configs would have lost them.
    expect(names(['sglang', 'mooncake', 'python'], lost)).toEqual([]);
    expect(names(['vllm', 'python'], nccl)).toEqual([]);
  });

  it("one hung collective's chain on a rank is one torch event", () => {
    const chain = [
      RULE_FIXTURES.torch_nccl_watchdog_timeout![0],
      RULE_FIXTURES.torch_watchdog_failure_detected![0],
      RULE_FIXTURES.torch_collective_dump_signal![1],
      RULE_FIXTURES.torch_watchdog_thread_terminated![0],
    ]
      // One rank prints its chain within the second (the fixtures are quoted from reports of other days, and incidents
      // are grouped by time): every line at one stamp, the unstamped one with the prefix torch gives it.
      .map((l) =>
        /[IWEF]\d{4} \d\d:\d\d:\d\d/.test(l!)
          ? l!.replace(/[IWEF]\d{4} \d\d:\d\d:\d\d/, 'E1129 14:09:40')
          : `[rank3]:[E1129 14:09:40.000000000 ProcessGroupNCCL.cpp:1] ${l}`,
      )
      .join('\n');
    expect(names(ALL, chain)).toEqual(['torch_nccl_watchdog_timeout']);
    // The peer rank sees only the dump signal: that is its event.
    expect(names(ALL, RULE_FIXTURES.torch_collective_dump_signal![0]!)).toEqual([
      'torch_collective_dump_signal',
    ]);
  });
});

describe('new rules: near-misses raise nothing of the rule (issue 27 item 8)', () => {
  // [rule, near-miss line, the events it must give (all packs)]: upstream lines printed beside the rule's own, the
  // rule's words in another shape, and the sibling rule a shared stem must go to instead.
  const cases: [string, string, string[]][] = [
    [
      'torch_collective_dump_signal',
      '[rank0]:[E709 17:05:38.162895613 ProcessGroupNCCL.cpp:2106] [PG ID 0 PG GUID 0(default_pg) Rank 0] First PG on this rank to signal dumping.',
      [],
    ],
    [
      'torch_watchdog_failure_detected',
      '[rank1]:[E813 12:25:30.692194747 ProcessGroupNCCL.cpp:670] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.',
      [],
    ],
    [
      'torch_watchdog_thread_terminated',
      "[rank0] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.",
      [],
    ],
    [
      'sglang_disagg_prefill_info_gave_up',
      '[2026-02-27 15:01:51 TP0] Could not fetch prefill parallel info from bootstrap_addr: 10.0.0.5:8998',
      ['nixl_prefill_info_unreachable'],
    ],
    [
      'sglang_disagg_route_fetch_failed',
      RULE_FIXTURES.sglang_disagg_prefill_not_registered![0]!,
      ['sglang_disagg_prefill_not_registered'],
    ],
    [
      'sglang_disagg_route_fetch_failed',
      '[2026-08-10 09:47:36 TP0] Error fetching prefill server info from bootstrap: timed out',
      ['sglang_disagg_prefill_info_fetch_failed'],
    ],
    [
      'sglang_disagg_register_dp_rank_failed',
      '[2026-08-10 09:47:36 TP0] Registered dp_rank=1 for bootstrap_room=4412',
      [],
    ],
    [
      'sglang_disagg_prefill_register_retry',
      '[2026-08-10 09:47:36 TP2] Prefill successfully registered to bootstrap server.',
      [],
    ],
    [
      'sglang_disagg_rebootstrap_failed',
      '[2026-08-10 09:47:36 TP0] Synced disaggregation bootstrap port from leader: local=8998 -> leader=8999 (world_rank=3)',
      [],
    ],
    ['sglang_scheduler_dead_at_init', '[2026-08-10 09:47:36] Exit code: -9', []],
    ['sglang_pd_warmup_failed', '[2026-08-10 09:47:36] End of disaggregation warmup', []],
    ['sglang_warmup_failed', '[2026-08-10 09:47:36] The server is fired up and ready to roll!', []],
    ['sglang_watchdog_thread_crashed', '[2026-08-10 09:47:36 TP0] Watchdog Scheduler initialized.', []],
    [
      'sglang_pool_leak',
      '[2026-08-10 09:47:36 TP0] [Mem Check (BUSY)] [full] total=1048576, available=20480, evictable=0, protected=0, session_held=0, uncached=1028096',
      [],
    ],
    [
      'sglang_watchdog_pool_dump',
      [
        '[2026-08-10 09:47:31 TP0] Scheduler debug info:',
        '[full] total=1048576, available=20480, evictable=0, protected=0, session_held=0, uncached=1028096',
        '[2026-08-10 09:47:36 TP0] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=True)',
      ].join('\n'),
      ['sglang_watchdog_soft'],
    ],
    [
      'nixl_agent_remote_gone',
      "E0821 20:48:50.123456    4242 nixl_agent.cpp:613] makeConnection: no common backend to connect with 'prefill-1'",
      [],
    ],
    [
      'nixl_agent_transfer_error',
      "E0821 20:48:50.123456    4242 nixl_agent.cpp:378] createBackend: backend 'UCX' supportsRemote but not notifications",
      [],
    ],
    [
      'nixl_agent_remote_metadata_missing',
      'E0821 20:48:50.123456    4242 nixl_metadata_worker.cpp:150] Metadata worker task threw an exception: stop',
      [],
    ],
    [
      'mooncake_te_slice_failed',
      'I0822 13:12:18.123456  4242 worker_pool.cpp:640] Worker: WR flush error (peer_nic: 10.0.0.7:15432@mlx5_1), redispatching if retry allows',
      [],
    ],
    [
      'mooncake_te_handshake_rejected',
      'E0822 13:12:18.123456  4242 transfer_metadata.cpp:1540] Notify rejected by 10.0.0.7:15432: busy',
      [],
    ],
    [
      'mooncake_te_qp_setup_failed',
      'W0822 13:12:18.123456  4242 rdma_endpoint.cpp:263] Failed to modify QP[3] to RESET',
      [],
    ],
    [
      'vllm_worker_start_failed',
      '(Worker_TP0 pid=206651) INFO 08-10 11:24:11 [multiproc_executor.py:760] WorkerProc shutting down.',
      [],
    ],
    [
      'vllm_worker_failed',
      '(Worker_TP0 pid=206651) WARNING 08-10 11:24:11 [multiproc_executor.py:770] WorkerProc was terminated',
      [],
    ],
    [
      'vllm_scheduler_stats_dump',
      '(EngineCore_DP0 pid=16899) ERROR 11-25 12:06:16 [dump_input.py:78] Dumping scheduler output for model execution: SchedulerOutput(scheduled_new_reqs=[])',
      [],
    ],
    ['vllm_nixl_engine_failure', RULE_FIXTURES.vllm_nixl_transfer_failed![0]!, ['vllm_nixl_transfer_failed']],
    [
      'vllm_shm_broadcast_wait',
      '(EngineCore_DP0 pid=9) INFO 08-10 01:44:59 [shm_broadcast.py:300] No available shared memory broadcast block yet',
      [],
    ],
    [
      'vllm_mooncake_pull_failed',
      "(Worker_TP0 pid=3311) DEBUG 08-10 12:00:00 [mooncake_connector.py:1840] pulling kv_caches for ['cmpl-3da4-0'] finished",
      [],
    ],
    [
      'vllm_mooncake_bootstrap_register_failed',
      '(Worker_TP0 pid=2211) DEBUG 08-10 12:00:00 [mooncake_connector.py:950] Successfully registered with bootstrap server at http://10.0.0.5:8998/register',
      [],
    ],
    [
      'lmcache_retrieve_short',
      '[2026-01-27 01:40:09,402] LMCache ERROR: Num retrieved tokens: 128, num expected tokens: 256 (vllm_v1_adapter.py:1036:lmcache.integration.vllm.vllm_v1_adapter)',
      [],
    ],
    ['rust_panic', 'note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace', []],
    // Issue 27 rules3: the lines printed around the new rules' own.
    [
      'sglang_child_process_failed',
      '[2026-08-10 09:47:36] Child process pid=3417555 frame=<frame at 0x7f>',
      [],
    ],
    [
      'sglang_scheduler_terminated',
      '[2026-08-10 09:47:36] Scheduler or DataParallelController 3417555 is still running',
      [],
    ],
    [
      'sglang_health_forced_exit',
      "2025-06-10T09:47:36.123Z INFO dynamo.sglang: Updating endpoint 'generate' health status: Ready -> NotReady",
      [],
    ],
    [
      'sglang_grammar_invalid',
      "[2026-08-10 09:47:36 TP0] regex hasn't been supported by xgrammar yet. This is skipped.",
      [],
    ],
    [
      'lmcache_store_alloc_failed',
      '[2025-07-03 12:45:22,498] LMCache ERROR: Failed to allocate memory for the async remote-retrieved KV cache.',
      [],
    ],
    [
      'vllm_tool_parser_error',
      '(APIServer pid=7) DEBUG 08-10 14:00:01 [hermes_tool_parser.py:210] Skipping chunk as a result of tool streaming extraction error',
      [],
    ],
    // Issue 27 rules4: the lines printed around the new rules' own (same functions, upstream wordings).
    [
      'vllm_worker_output_failed',
      '(Worker_TP0 pid=206651) DEBUG 08-10 11:24:11 [multiproc_executor.py:700] Worker 0 async output copy thread started',
      [],
    ],
    [
      'lmcache_l2_store_failed',
      '[2026-08-10 14:00:01,250] LMCache WARNING: Serialize task failed for adapter 0, 12 keys (store_controller.py:560:lmcache.v1.distributed.storage_controllers.store_controller)',
      [],
    ],
    [
      'lmcache_l2_store_failed',
      '[2026-08-10 14:00:01,250] LMCache WARNING: Completed store task 9 (adapter 0) not found in tracking. (store_controller.py:498:lmcache.v1.distributed.storage_controllers.store_controller)',
      [],
    ],
    [
      'lmcache_remote_connect_failed',
      '[2026-08-10 14:00:01,250] LMCache WARNING: Connection will not be re-established yet since it has not been long enough since the last failure (remote_backend.py:113:lmcache.v1.storage_backend.remote_backend)',
      [],
    ],
    [
      'lmcache_remote_connect_failed',
      '[2026-08-10 14:00:01,250] LMCache INFO: Connection initialized/re-established at redis://10.0.0.9:6379 (remote_backend.py:121:lmcache.v1.storage_backend.remote_backend)',
      [],
    ],
    // The same words from another program, without LMCache's record prefix.
    ['lmcache_remote_ping_failed', '2026-08-10T14:00:01Z WARN healthcheck: Ping timeout after 5s', []],
    ['lmcache_remote_ping_failed', '[2026-08-10 14:00:01 TP0] Ping error: connection reset', []],
    [
      'lmcache_remote_ping_failed',
      '[2026-08-10 14:00:01,250] LMCache INFO: Starting remote monitor thread redis-monitor-thread with interval 30s and timeout 5s (remote_monitor.py:96:lmcache.v1.storage_backend.remote_monitor)',
      [],
    ],
  ];
  for (const [rule, line, want] of cases) {
    it(`${rule}: ${line.slice(0, 70)}…`, () => {
      expect(PACKS[LOG_PACKS.find((p) => PACKS[p].rules.some((r) => r.name === rule))!]).toBeDefined();
      const got = names(ALL, line);
      expect(got).not.toContain(rule);
      expect(got).toEqual(want);
    });
  }

  it("LMCache's ping failures as its logger prints them, colour codes and all (lmcache/logging.py build_format)", () => {
    const lines = [
      '\x1b[33;20m[2026-08-10 14:01:01,004] LMCache WARNING:\x1b[0m Ping timeout \x1b[3m(remote_monitor.py:138:lmcache.v1.storage_backend.remote_monitor)\x1b[0m',
      '\x1b[31;20m[2026-08-10 14:01:31,006] LMCache ERROR:\x1b[0m Ping error: Connection closed by server. \x1b[3m(remote_monitor.py:145:lmcache.v1.storage_backend.remote_monitor)\x1b[0m',
      '\x1b[33;20m[2026-08-10 14:02:01,008] LMCache WARNING:\x1b[0m Ping failed with error code: -1 \x1b[3m(remote_monitor.py:135:lmcache.v1.storage_backend.remote_monitor)\x1b[0m',
    ];
    const m = scan(ALL, `${lines.join('\n')}\n`);
    expect(m.map((x) => x.rule.name)).toEqual([
      'lmcache_remote_ping_failed',
      'lmcache_remote_ping_failed',
      'lmcache_remote_ping_failed',
    ]);
    expect(m[2]!.fields.code).toBe('-1');
    expect(m.every((x) => x.severity === 'warning' && x.rule.class === 'cache_tier_unavailable')).toBe(true);
  });

  it('an L2 store failure names the task and the adapter, not the keys', () => {
    const m = scan(ALL, `${RULE_FIXTURES.lmcache_l2_store_failed![0]}\n`);
    expect(m.map((x) => x.rule.name)).toEqual(['lmcache_l2_store_failed']);
    expect(m[0]!.fields).toEqual({ task: '17', adapter: '0' });
  });

  it("a vLLM worker's output thread failing is one critical naming the exception of its traceback", () => {
    const m = scan(ALL, `${RULE_FIXTURES.vllm_worker_output_failed![0]}\n`);
    expect(m.map((x) => x.rule.name)).toEqual(['vllm_worker_output_failed']);
    expect(m[0]!.severity).toBe('critical');
    expect(m[0]!.fields).toMatchObject({
      exception: 'torch.AcceleratorError',
      message: 'CUDA error: an illegal memory access was encountered',
    });
  });

  it('the watchdog dump before a kill is one event naming the component and the timeout', () => {
    const m = scan(ALL, `${RULE_FIXTURES.sglang_watchdog_pool_dump![0]}\n`);
    expect(m.map((x) => x.rule.name)).toEqual(['sglang_watchdog_pool_dump']);
    expect(m[0]!.fields).toMatchObject({ component: 'Scheduler', timeout: '300' });
    expect(m[0]!.rule.severity).toBe('critical');
  });

  it('a vLLM worker start-up death is one event whose fields name the exception, the API server line included', () => {
    const text = `${RULE_FIXTURES.vllm_worker_start_failed![0]}\n${RULE_FIXTURES.vllm_engine_core_init_failed![0]}\n`;
    const m = scan(ALL, text);
    expect(m.map((x) => x.rule.name)).toEqual(['vllm_worker_start_failed']);
    expect(m[0]!.fields).toMatchObject({ exception: 'RuntimeError' });
    expect(m[0]!.fields.message).toContain('NCCL error');
  });

  it("new rules' classes say what happened: start-up deaths are engine deaths, dumps and leaks their own", () => {
    const cls = (n: string) =>
      LOG_PACKS.flatMap((p) => PACKS[p].rules)
        .filter((r) => r.name === n)
        .map((r) => `${r.class}/${r.severity}`)[0];
    expect(cls('sglang_scheduler_dead_at_init')).toBe('engine_death/critical');
    expect(cls('vllm_engine_core_init_failed')).toBe('engine_death/critical');
    expect(cls('sglang_watchdog_thread_crashed')).toBe('thread_death/critical');
    expect(cls('rust_panic')).toBe('thread_death/critical');
    expect(cls('vllm_scheduler_stats_dump')).toBe('engine_dump/warning');
    expect(cls('sglang_pool_leak')).toBe('memory_invariant/warning');
    expect(cls('vllm_kv_load_recovered')).toBe('transfer_failure/warning');
    expect(cls('nixl_agent_remote_gone')).toBe('connection_lost/critical');
  });
});
