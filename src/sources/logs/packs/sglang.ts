// SGLang scheduler, tokenizer, detokenizer and HTTP-process signatures, read from SGLang main (2026-08) with
// the older wordings kept where they cost nothing. SGLang prints no level name (`[%(asctime)s{prefix}] %(message)s`,
// utils/common.py configure_logger) and the level of some lines changed between versions, so rules key on text.
// Each rule names its upstream file and the versions its wording applies to (`upstream`). A dying scheduler
// prints a chain (exception or watchdog → `Subprocess … crashed` → `SIGQUIT received`): one incident, so those
// rules share the `PROCESS_DEATH` key (every pack's, patterns.ts) and the first line of the chain is the event.
import { EXCEPTION_LINE, PROCESS_DEATH } from './patterns.js';
import type { PackRule, RulePack, RuleClass } from './types.js';

const KV_ABORT = String.raw`Aborted by AbortReq\.`;
const KV_TIMEOUT = String.raw`timed out after (?<seconds>[\d.]+)s in KVPoll\.(?<state>\w+)`;
// The reason follows the stem within REASON_GAP characters (RE2, which mtail programs generated from the packs use, allows at most 1000; the exception's repr: ~100 upstream). Bounded, so a
// line repeating the stem costs REASON_GAP per stem, not the rest of the line (issue 24: `.*` here was quadratic).
// The three variants share the bound, so every stem line is exactly one of them.
const REASON_GAP = 1000;
const GAP = `.{0,${REASON_GAP}}`;
const OTHER = String.raw`(?!${GAP}(?:Aborted by AbortReq\.|timed out after [\d.]+s in KVPoll\.))`;
// `rank=0 req.rid='…' req.bootstrap_room=…` (prefill.py), `rank=0 decode_req.req.rid='…'` (decode.py), and the
// newer `rank=0 rid=… bootstrap_room=…` (decode.py _handle_bootstrap_failure).
const RID = String.raw`rank=(?<rank>\d+) (?:[\w.]*rid=)'?(?<rid>[^'\s]*)`;

/**
 * One per-request PD failure stem split by its reason suffix (the rule label stays bounded): `Aborted by
 * AbortReq.` is an abort, `timed out after …s in KVPoll.*` a KV timeout, anything else a transfer failure.
 */
function byReason(stem: string, base: string, upstream: string): PackRule[] {
  const variants: [string, string, RuleClass][] = [
    ['aborted', `${GAP}${KV_ABORT}`, 'abort'],
    ['timeout', `${GAP}${KV_TIMEOUT}`, 'transfer_timeout'],
    ['failed', OTHER, 'transfer_failure'],
  ];
  return variants.map(([suffix, tail, cls]) => ({
    name: `${base}_${suffix}`,
    severity: 'warning',
    class: cls,
    upstream,
    perRequest: 'rid',
    match: `${stem} ${RID}${tail}`,
  }));
}

export const sglangPack: RulePack = {
  name: 'sglang',
  engineLines: ['sglang_batch'],
  rules: [
    // disaggregation/prefill.py PrefillBootstrapQueue.pop_bootstrapped / handle_bootstrap_failure
    // (2025-05 → main 2026-08; logger.error then logger.warning): per request and per TP rank.
    ...byReason(
      'Prefill bootstrap failed for request',
      'sglang_prefill_bootstrap',
      'disaggregation/prefill.py pop_bootstrapped (2025-05 → 2026-08)',
    ),
    // disaggregation/decode.py DecodePreallocQueue._update_handshake_waiters / _handle_bootstrap_failure
    // (2025-09 → 2026-08): `Decode handshake failed for request rank={tp_rank} {rid=} {bootstrap_room=}`.
    ...byReason(
      'Decode handshake failed for request',
      'sglang_decode_handshake',
      'disaggregation/decode.py _update_handshake_waiters (2025-09 → 2026-08)',
    ),
    // disaggregation/decode.py DecodeTransferQueue.pop_transferred (2025-05 → 2026-08).
    ...byReason(
      'Decode transfer failed for request',
      'sglang_decode_transfer',
      'disaggregation/decode.py pop_transferred (2025-05 → 2026-08)',
    ),
    // disaggregation/prefill.py process_disagg_prefill_inflight_queue (2025-05 → 2026-08).
    {
      name: 'sglang_prefill_transfer_failed',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: 'disaggregation/prefill.py process_disagg_prefill_inflight_queue (2025-05 → 2026-08)',
      perRequest: 'rid',
      match: String.raw`Prefill transfer failed for request ${RID}`,
    },
    // warning_once in prefill.py / decode.py (2025-06 → 2026-08): printed once per process, so one line means
    // the timeout has started to bite.
    {
      name: 'sglang_bootstrap_timeout_warning',
      severity: 'warning',
      class: 'transfer_timeout',
      upstream: 'disaggregation/prefill.py pop_bootstrapped warning_once (2025-06 → 2026-08)',
      match: String.raw`Some requests timed out when bootstrapping`,
    },
    {
      name: 'sglang_waiting_timeout_warning',
      severity: 'warning',
      class: 'transfer_timeout',
      upstream: 'disaggregation/decode.py pop_transferred warning_once (2025-06 → 2026-08)',
      match: String.raw`Some requests fail to receive KV Cache transfer done signal after bootstrapping`,
    },
    // utils/watchdog.py Watchdog._watchdog_once (2025-12 → 2026-08):
    // `{debug_name} watchdog timeout ({self.watchdog_timeout=}, {self.soft=})`; managers/scheduler.py
    // watchdog_thread (≤ 2025-11): `Scheduler watchdog timeout (self.watchdog_timeout=300)` and, older still,
    // `Watchdog timeout (self.watchdog_timeout=300)`. Not soft: it SIGQUITs the server 5 s later.
    {
      name: 'sglang_watchdog_timeout',
      severity: 'critical',
      class: 'watchdog_timeout',
      upstream: 'utils/watchdog.py (2025-12 → 2026-08), managers/scheduler.py watchdog_thread (≤ 2025-11)',
      incident: PROCESS_DEATH,
      // `\b…\w{1,64}`: the component starts a word, so a long word is tried once (`\w+` alone was quadratic).
      match: String.raw`(?:\b(?<component>\w{1,64}) watchdog|Watchdog) timeout \((?:self\.)?watchdog_timeout=(?<timeout>[\d.]+)(?:, (?:self\.)?soft=False)?\)`,
    },
    // The same watchdog with soft=True only dumps stacks and keeps serving: a warning.
    {
      name: 'sglang_watchdog_soft',
      severity: 'warning',
      class: 'watchdog_timeout',
      upstream: 'utils/watchdog.py _watchdog_once soft=True (2025-12 → 2026-08)',
      match: String.raw`\b(?<component>\w{1,64}) watchdog timeout \((?:self\.)?watchdog_timeout=(?<timeout>[\d.]+), (?:self\.)?soft=True\)`,
    },
    // entrypoints/engine.py sigquit_handler, launch phase (2025-01 → 2026-08) and, before 2026-03, the only form.
    {
      name: 'sglang_sigquit_from_child',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'entrypoints/engine.py sigquit_handler (2025-01 → 2026-08, launch phase after 2026-03)',
      incident: PROCESS_DEATH,
      match: String.raw`Received sigquit from a child process`,
    },
    // managers/tokenizer_manager.py SignalHandler.running_phase_sigquit_handler (2026-03 → 2026-08):
    // `SIGQUIT received. {signum=}, {frame=}. It usually means one child failed.`
    {
      name: 'sglang_sigquit_running',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'managers/tokenizer_manager.py running_phase_sigquit_handler (2026-03 → 2026-08)',
      incident: PROCESS_DEATH,
      match: String.raw`SIGQUIT received\. .{0,80}It usually means one child failed`,
    },
    // managers/tokenizer_manager.py subprocess watchdog (2026-06 → 2026-08):
    // `Subprocess {name} (pid={pid}) crashed with exit code {code}. Triggering SIGQUIT for cleanup...`
    {
      name: 'sglang_subprocess_crashed',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'managers/tokenizer_manager.py subprocess watchdog (2026-06 → 2026-08)',
      incident: PROCESS_DEATH,
      match: String.raw`Subprocess (?<process>[\w.-]+) \(pid=(?<pid>\d+)\) crashed with exit code (?<code>-?\d+)`,
    },
    // managers/scheduler.py run_scheduler_process: `Scheduler hit an exception: {traceback}` (2024 → 2026-08).
    {
      name: 'sglang_scheduler_exception',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'managers/scheduler.py run_scheduler_process (2024 → 2026-08)',
      incident: PROCESS_DEATH,
      logger: 'sglang',
      match: String.raw`Scheduler hit an exception:`,
      // The traceback follows unprefixed (one logger record); its last exception line is the root cause.
      follows: { match: EXCEPTION_LINE, within: 200 },
      emitUnclosed: true,
    },
    // managers/detokenizer_manager.py run_detokenizer_process, managers/tokenizer_manager.py
    // (handle_loop / print_exception_wrapper), managers/data_parallel_controller.py
    // run_data_parallel_controller_process (2024 → 2026-08): `{Name} hit an exception: {traceback}`.
    {
      name: 'sglang_manager_exception',
      severity: 'critical',
      class: 'engine_death',
      upstream:
        'managers/{detokenizer_manager,tokenizer_manager,data_parallel_controller}.py (2024 → 2026-08)',
      incident: PROCESS_DEATH,
      logger: 'sglang',
      match: String.raw`(?<component>DetokenizerManager|TokenizerManager|DataParallelController|MultiTokenizerRouter|FaultToleranceManager) hit an exception:`,
      follows: { match: EXCEPTION_LINE, within: 200 },
      emitUnclosed: true,
    },
    // entrypoints/http_server.py health_generate (2025-03 → 2026-08): /health answers 503.
    {
      name: 'sglang_health_check_failed',
      severity: 'warning',
      class: 'health_check_failed',
      upstream: 'entrypoints/http_server.py health_generate (2025-03 → 2026-08)',
      match: String.raw`Health check failed\. Server couldn't get a response from detokenizer for last (?<seconds>\d+) seconds`,
    },
    // managers/scheduler.py update_running_batch (2024 → 2026-08):
    // `KV cache pool is full. Retract requests. #retracted_reqs: {n}, #new_token_ratio: {a:.4f} -> {b:.4f}`.
    {
      name: 'sglang_kv_pool_full_retract',
      severity: 'warning',
      class: 'retract',
      upstream: 'managers/scheduler.py update_running_batch (2024 → 2026-08)',
      match: String.raw`KV cache pool is full\. Retract requests\.(?: #retracted_reqs: (?<retracted>\d+))?`,
    },
    // disaggregation/decode.py DecodeTransferQueue._check_metadata (2026-02 → 2026-08): `Context corruption
    // detected: Request {rid} (bootstrap_room={a}) received metadata from bootstrap_room={b}. …`. The KV that
    // arrived for this request was another request's: its answer (and any other the mix-up touched) is garbage, and
    // nothing else will say so: critical, of the class for wrong KV (issue 40). The request is aborted and the
    // engine serves on; one request's line per rank counts once.
    {
      name: 'sglang_context_corruption',
      severity: 'critical',
      class: 'wrong_kv',
      upstream: 'disaggregation/decode.py DecodeTransferQueue metadata check (2026-02 → 2026-08)',
      perRequest: 'rid',
      match: String.raw`Context corruption detected: Request (?<rid>\S+) \(bootstrap_room=(?<room>\d+)\)(?: received metadata from bootstrap_room=(?<from>\d{1,20}))?`,
    },
    // managers/tokenizer_manager.py TokenizerManager.sigterm_watchdog (index copies, 2025 → 2026): on SIGTERM while
    // the server is UnHealthy, `logger.error("Signal SIGTERM received while health check failed. Force exiting.")`
    // (older: `… Exiting... remaining number of requests: %d`), the requests are dumped and force_exit_handler ends the
    // process: the orchestrator killed a server whose own health check failed. Critical, and the process's death.
    {
      name: 'sglang_health_sigterm_exit',
      severity: 'critical',
      class: 'health_check_failed',
      upstream: 'managers/tokenizer_manager.py TokenizerManager.sigterm_watchdog (index copies, 2025 → 2026)',
      incident: PROCESS_DEATH,
      logger: 'sglang',
      match: String.raw`Signal SIGTERM received while health check failed\. (?:Force exiting|Exiting\.\.\. remaining number of requests: (?<remaining>\d{1,9}))`,
    },
    // disaggregation/decode.py, the PD deferred KV release (PR #35049, 2026-08; SGLANG_DISAGGREGATION_DEFERRED_*): a
    // decode that aborted a request while its prefill may still write into the request's KV pages holds the pages
    // until every prefill rank acks, and past the timeout warns `Deferred KV release … timed out … releasing anyway`
    // and frees them (a late write then lands in pages another request owns). The wording is the quote of
    // decode.py at d315eb7: that commit is not in the search index and the repository is over the fetch limit, so the
    // words between are matched loosely and the room is read wherever the line names it. A warning naming its room;
    // the paged allocator's bare `AssertionError` a scheduler may die on after it is the same incident (PROCESS_DEATH:
    // the scheduler's death is then its own critical event, this line a member).
    {
      name: 'sglang_deferred_kv_release_timeout',
      severity: 'warning',
      class: 'transfer_timeout',
      upstream:
        'disaggregation/decode.py deferred KV release (PR #35049, 2026-08; wording from issue 40 quoting d315eb7, not readable here)',
      incident: PROCESS_DEATH,
      logger: 'sglang',
      match: String.raw`Deferred KV release(?:(?=[^\n]{0,400}?\b(?:bootstrap_)?room[ =:]{1,3}(?<room>\d{1,20}))|)[^\n]{0,400}? timed out\b[^\n]{0,400}?releasing anyway`,
    },
    // constrained/xgrammar_backend.py dispatch_json/_ebnf/_regex/_structural_tag (`Hit invalid {kind}: {key_string=},
    // {e=}` at 65cf1ed0b8b1cec4c51690b3294f3d2367e09ef8; `Skip invalid {kind}: {kind}={key_string}, {e=}` before) and
    // llguidance_backend.py _from_serialized (`Hit invalid grammar: …` at 2397abe3709752134fa38d9991366f4079b5eb57): a
    // request's grammar did not compile, that request fails. The grammar is the user's and printed on this line and,
    // raw, on lines after it: the carrier `sglang_invalid_grammar` (../carriers.ts) shields them, this rule alone sees
    // the header. A user sends a bad schema at will, so a warning whose class names nothing.
    {
      name: 'sglang_grammar_invalid',
      severity: 'warning',
      class: 'grammar',
      upstream:
        'constrained/xgrammar_backend.py dispatch_* (read at 65cf1ed0, older `Skip invalid`), constrained/llguidance_backend.py _from_serialized (read at 2397abe3)',
      logger: 'sglang',
      match: String.raw`(?:Hit|Skip) invalid (?<kind>json_schema|ebnf|regex|structural_tag|grammar): `,
    },
    // managers/scheduler_output_processor_mixin.py process_batch_result_prefill/_decode (index copies 2025 → 2026; the
    // index stores the path at 5294b03c42e7f098131b9825a9a2b23e10f4ae35): `logger.error(f"Grammar accept_token failed
    // for req {req.rid} with token {next_token_id}: {e}")`, then the request is aborted. The ValueError's text
    // (xgrammar_backend.py accept_token) goes on `Accepted tokens: […]` and `Key string: {grammar}`, raw, which the
    // carrier `sglang_grammar_key_string` shields. Newer builds abort with the message and print nothing.
    {
      name: 'sglang_grammar_accept_failed',
      severity: 'warning',
      class: 'grammar',
      upstream:
        'managers/scheduler_output_processor_mixin.py process_batch_result_* grammar accept (index copies 2025 → 2026)',
      logger: 'sglang',
      perRequest: 'rid',
      match: String.raw`Grammar accept_token failed for req (?<rid>[^\s']{1,256}) with token (?<token>-?\d{1,12}): `,
    },
    // The parser failed and returned the raw tool-call markup as content: function_call/*_detector.py and
    // entrypoints/openai/serving_chat.py (2025-03 → 2026-08).
    {
      name: 'sglang_tool_call_parse_error',
      severity: 'warning',
      class: 'tool_call_parse_error',
      upstream: 'function_call/base_format_detector.py, serving_chat.py (2025-03 → 2026-08)',
      match: String.raw`Error in detect_and_parse: |Error in parse_streaming_increment: |Tool call parsing error: `,
    },
    // entrypoints/engine.py, the launcher's wait for each scheduler's ready message (2024 → main 2026; index copies
    // of engine.py and its successor's `wait`): `Rank {i} scheduler is dead. Please check if there are relevant
    // logs.`, then `Exit code: {code}` and the EOFError. A scheduler died during initialisation (on this node or,
    // with --nnodes, the rank this node launched): the server never comes up.
    // The newest launcher (entrypoints/engine.py _launch_subprocesses at 18bfdd16794a857cefaebc00a0964935b8d0a026,
    // one scheduler per launch-plan lane) says `Scheduler lane %s is dead. Please check if there are relevant logs.`
    {
      name: 'sglang_scheduler_dead_at_init',
      severity: 'critical',
      class: 'engine_death',
      upstream:
        'entrypoints/engine.py scheduler ready wait (2024 → 2026-08, index copies of both ages; `Scheduler lane` read at 18bfdd16)',
      incident: PROCESS_DEATH,
      match: String.raw`(?:Rank (?<rank>\d+) scheduler|Scheduler lane (?<lane>\d+)) is dead\. Please check if there are relevant logs\.`,
    },
    // entrypoints/engine.py _set_envs_and_config sigchld_handler (read at 18bfdd16794a857cefaebc00a0964935b8d0a026):
    // `logger.warning("Child process unexpectedly failed with exitcode=%s. pid=%s", exitcode, pid)`; 2025 builds
    // printed the same words from an f-string (`with {exitcode=}. {pid=}`), older ones `with an exit code %d.
    // pid=%d`. The exit status is os.waitpid's (9: SIGKILL, 256: exit 1): a child of the server (a scheduler, the
    // detokenizer, a data-parallel controller) died, by a signal or an error. Critical, part of the death chain.
    {
      name: 'sglang_child_process_failed',
      severity: 'critical',
      class: 'engine_death',
      upstream:
        'entrypoints/engine.py _set_envs_and_config sigchld_handler (2024 → 2026-08, read at 18bfdd16)',
      incident: PROCESS_DEATH,
      match: String.raw`Child process unexpectedly failed with (?:exitcode=|an exit code )(?<code>-?\d{1,10})\. pid=(?<pid>\d{1,10})`,
    },
    // entrypoints/engine.py _launch_subprocesses, nodes of rank ≥ 1 (read at 18bfdd16794a857cefaebc00a0964935b8d0a026):
    // after the scheduler's join, `Scheduler or DataParallelController %s terminated with %s` (pid, exitcode: -N for
    // a signal, -9 SIGKILL, -6 SIGABRT) and, single-process mode, `Scheduler or DataParallelController %s terminated`
    // (thread name). That node's scheduler is gone, and with it every rank it held: critical.
    {
      name: 'sglang_scheduler_terminated',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'entrypoints/engine.py _launch_subprocesses node_rank ≥ 1 join (read at 18bfdd16)',
      incident: PROCESS_DEATH,
      match: String.raw`Scheduler or DataParallelController (?<proc>[\w.-]{1,64}) terminated(?: with (?<code>-?\d{1,10}))?`,
    },
    // NVIDIA Dynamo's SGLang worker, SglangEngineMonitor._check_engine_health (dynamo.sglang; two ages in the index,
    // which names neither repository nor commit for them): every failed check `SGLang engine health check failed
    // (attempt N): {e}` (newer also `… health check timed out after Ns (attempt N)`), retried; after
    // SGLANG_MAX_FAILURES_BEFORE_SHUTDOWN of them `SGLang engine unresponsive after N attempts` (older, then
    // `Initiating Dynamo Runtime shutdown.` and os._exit(1); newer `Shutting down: SGLang engine unresponsive after N
    // attempts` and sys.exit(1)). The worker kills itself while the engine's health check fails: critical.
    {
      name: 'sglang_health_forced_exit',
      severity: 'critical',
      class: 'health_check_failed',
      upstream:
        'dynamo components/src/dynamo/sglang SglangEngineMonitor._check_engine_health (index copies, 2025; commit not named by the index)',
      match: String.raw`SGLang engine unresponsive after (?<attempts>\d{1,6}) attempts`,
    },
    {
      name: 'sglang_health_check_retry',
      severity: 'warning',
      class: 'health_check_failed',
      upstream:
        'dynamo components/src/dynamo/sglang SglangEngineMonitor._check_engine_health (index copies, 2025; commit not named by the index)',
      match: String.raw`SGLang engine health check (?:failed|timed out after \d{1,6}s) \(attempt (?<attempt>\d{1,6})\)`,
    },
    // entrypoints/engine.py, same wait: `raise RuntimeError("Initialization failed. Please see the error messages
    // above.")` when a scheduler reported a status other than ready (2024 → 2026-08).
    {
      name: 'sglang_init_failed',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'entrypoints/engine.py scheduler ready wait (2024 → 2026-08, index copies of both ages)',
      incident: PROCESS_DEATH,
      match: String.raw`Initialization failed\. Please see the error messages above\.`,
    },
    // entrypoints/http_server.py _execute_server_warmup (2024 → 2026-08, index copies of both ages): `Initialization
    // failed. warmup error: {last_traceback}`, then kill_process_tree: the server kills itself at start-up.
    {
      name: 'sglang_warmup_failed',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'entrypoints/http_server.py _execute_server_warmup (2024 → 2026-08)',
      incident: PROCESS_DEATH,
      match: String.raw`Initialization failed\. warmup error: `,
    },
    // entrypoints/http_server.py _execute_server_warmup, PD mode: the warm-up request through the prefill/decode
    // pair failed. `Disaggregation warmup failed (mode=%s), status code: %s` (PR #25542, 2026-05 → 2026-08) and
    // before it `Prefill disaggregation mode warm Up Failed, status code: {}` (2025 → 2026-05); both at INFO, and
    // the server marks itself UnHealthy (/health 503) while printing `The server is fired up and ready to roll!`.
    {
      name: 'sglang_pd_warmup_failed',
      severity: 'critical',
      class: 'health_check_failed',
      upstream:
        'entrypoints/http_server.py _execute_server_warmup PD branch (2025 → 2026-08; PR #25542 wording)',
      match: String.raw`(?:Disaggregation warmup failed \(mode=(?<mode>\w{1,32})\)|Prefill disaggregation mode warm Up Failed), status codes?: (?<status>\d+)`,
    },
    // utils/watchdog.py WatchdogRaw._watchdog_thread and SubprocessWatchdog._monitor_loop (index copy of main
    // 2026-08; older builds had no catch): `{debug_name} watchdog thread crashed: {e}` / `SubprocessWatchdog thread
    // crashed: {e}` with the traceback. The watchdog is gone: a later hang or child crash is never acted on.
    {
      name: 'sglang_watchdog_thread_crashed',
      severity: 'critical',
      class: 'thread_death',
      upstream:
        'utils/watchdog.py WatchdogRaw._watchdog_thread, SubprocessWatchdog._monitor_loop (2026 → 2026-08)',
      match: String.raw`\b(?<component>\w{1,64}?)(?: watchdog|Watchdog) thread crashed: `,
    },
    // utils/watchdog.py WatchdogRaw._watchdog_once: before a watchdog kill, `{debug_name} debug info:\n{info}`
    // (the scheduler's dump_info, managers/scheduler_runtime_checker_mixin.py create_scheduler_watchdog at
    // 008e7b87b07c4ef50f6506ffd1ae956fb9e16021: the current batch and each KV pool's `[full] total=…, available=…`),
    // then `{debug_name} watchdog timeout (…, self.soft=False)`. One event, naming the component and timeout, that
    // the timeout line's own rule is part of (same incident); with soft=True the record never closes.
    {
      name: 'sglang_watchdog_pool_dump',
      severity: 'critical',
      class: 'watchdog_timeout',
      upstream:
        'utils/watchdog.py _watchdog_once dump_info, scheduler_runtime_checker_mixin.py (2025-12 → 2026-08)',
      incident: PROCESS_DEATH,
      match: String.raw`\b(?<component>\w{1,64}) debug info:\s*$`,
      follows: {
        match: String.raw`\b(?<closing>\w{1,64}) watchdog timeout \((?:self\.)?watchdog_timeout=(?<timeout>[\d.]+), (?:self\.)?soft=False\)`,
        within: 200,
      },
    },
    // managers/scheduler_runtime_checker_mixin.py at 008e7b87b07c4ef50f6506ffd1ae956fb9e16021, the idle memory
    // invariant (on_idle → _report_leak / _check_req_pool): `pool memory leak detected! [full] total=…` and
    // `req_to_token_pool memory leak detected!available_size=…`. raise_error_or_warn raises (the scheduler dies,
    // its own chain) under SGLANG_ENABLE_STRICT_MEM_CHECK_DURING_IDLE, else warns: pool slots are lost for good.
    {
      name: 'sglang_pool_leak',
      severity: 'warning',
      class: 'memory_invariant',
      upstream: 'managers/scheduler_runtime_checker_mixin.py on_idle leak check (read at 008e7b87)',
      match: String.raw`\b(?<pool>\w{1,64}) memory leak detected!`,
    },
    // The same file's busy check (self_check_during_busy, SGLANG_ENABLE_STRICT_MEM_CHECK_DURING_BUSY): `assert not
    // full_leak, f"Full Pool Mem Leak Detected! {full_msg}"` (and `SWA Pool …`). The AssertionError ends the
    // scheduler's traceback, so the scheduler dies: critical, part of its death chain.
    {
      name: 'sglang_pool_leak_busy',
      severity: 'critical',
      class: 'memory_invariant',
      upstream: 'managers/scheduler_runtime_checker_mixin.py self_check_during_busy (read at 008e7b87)',
      incident: PROCESS_DEATH,
      match: String.raw`(?<pool>Full|SWA) Pool Mem Leak Detected! `,
    },
    // entrypoints/http_server.py _wait_and_warmup / _execute_server_warmup (2024 → 2026-08): `The server is fired up
    // and ready to roll!` once warm-up passed. A (re)started server: the deaths before it are over.
    {
      name: 'sglang_server_ready',
      severity: 'info',
      class: 'startup_info',
      upstream: 'entrypoints/http_server.py _wait_and_warmup (2024 → 2026-08)',
      logger: 'sglang',
      startup: true,
      match: String.raw`The server is fired up and ready to roll!`,
    },
    // model_executor/pool_configurator.py DSV4PoolConfigurator (2026-04 → 2026-08): startup marker for
    // DeepSeek-V4 KV pool sizing; `DSv4` in older builds, `DSV4` in newer.
    {
      name: 'sglang_bytes_per_full_token',
      severity: 'info',
      class: 'startup_info',
      upstream: 'model_executor/pool_configurator.py (2026-04 → 2026-08)',
      match: String.raw`DS[vV]4 memory calculation: bytes_per_full_token=(?<bytes>[\d.]+)`,
      extract: { bytes: 'bytesPerFullToken' },
    },
  ],
};
