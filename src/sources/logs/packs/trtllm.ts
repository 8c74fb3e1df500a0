// TensorRT-LLM's PyTorch executor behind `trtllm-serve` (NVIDIA/TensorRT-LLM; the repository is over the fetch
// limit, so these were read in the search index's copies: tensorrt_llm/_torch/pyexecutor/hang_detector.py (2026,
// with the rank-crash kill; the index lists 7ed07f06 among its 42 versions) and py_executor.py (several ages, the
// newest with `crashed` and the rank-crash watchdog). Python lines go through tensorrt_llm/logger.py
// (`[%m/%d/%Y-%H:%M:%S] [TRT-LLM] [RANK N] [E] msg`), C++ ones through common/logger.h (`[TensorRT-LLM][ERROR] msg`).
// The executor loop runs in a thread of each MPI rank: when it raises, py_executor logs the error and the traceback
// (two records), arms a kill of the whole world (hard_kill_on_rank_crash) and SIGKILLs it after a grace, so
// threading's `Exception in thread …` is seldom printed; the hang detector kills the same way after `timeout`
// (300 s) without a checkpoint of the loop.
import { EXCEPTION_LINE, PROCESS_DEATH } from './patterns.js';
import type { RulePack } from './types.js';

const PYEXEC = 'tensorrt_llm/_torch/pyexecutor';

export const trtllmPack: RulePack = {
  name: 'trtllm',
  engineLines: [],
  rules: [
    // hang_detector.py HangDetector._report_hang: `_best_effort_log_error(f"Hang detected after {self.timeout}
    // seconds.")`, then the stacks of every thread (print_all_stacks) and on_detected: the hard kill
    // (propagate_hard_kill: `HangDetector: propagating hard-kill to all ranks via MPI_Abort.` or `HangDetector:
    // self-SIGKILL; relying on the launcher to propagate to peer ranks.`). The executor loop stopped; the process
    // is about to die. One incident with the kill.
    {
      name: 'trtllm_hang_detected',
      severity: 'critical',
      class: 'watchdog_timeout',
      upstream: `${PYEXEC}/hang_detector.py HangDetector._report_hang (index copy, 2026)`,
      incident: PROCESS_DEATH,
      logger: 'trtllm',
      match: String.raw`Hang detected after (?<seconds>\d{1,9}) seconds\.`,
    },
    {
      name: 'trtllm_hard_kill',
      severity: 'critical',
      class: 'engine_death',
      upstream: `${PYEXEC}/hang_detector.py propagate_hard_kill (index copy, 2026)`,
      incident: PROCESS_DEATH,
      logger: 'trtllm',
      match: String.raw`HangDetector: (?:self-SIGKILL; relying on the launcher|propagating hard-kill to all ranks via MPI_Abort)`,
    },
    // hang_detector.py hard_kill_on_rank_crash: `Executor loop crashed on this rank; hard-killing all {n} ranks in
    // {s}s (peers cannot make progress without this rank). …` after the loop raised (py_executor.py
    // _event_loop_wrapper arms it before its cleanup).
    {
      name: 'trtllm_rank_crash_kill',
      severity: 'critical',
      class: 'engine_death',
      upstream: `${PYEXEC}/hang_detector.py hard_kill_on_rank_crash (index copy, 2026)`,
      incident: PROCESS_DEATH,
      logger: 'trtllm',
      match: String.raw`Executor loop crashed on this rank; hard-killing all (?<ranks>\d{1,6}) ranks`,
    },
    // py_executor.py PyExecutor._event_loop_wrapper (every age read): `logger.error(f"Error in event loop: {e}")`,
    // then `logger.error(traceback.format_exc())` (the next rule), then `raise e`: the executor thread is dead and
    // with it every request of this rank (the API server answers nothing more). The message is str(e), not its
    // type: the traceback record after it names the exception.
    {
      name: 'trtllm_event_loop_error',
      severity: 'critical',
      class: 'engine_death',
      upstream: `${PYEXEC}/py_executor.py PyExecutor._event_loop_wrapper (index copies 2025 → 2026)`,
      incident: PROCESS_DEATH,
      logger: 'trtllm',
      match: String.raw`Error in event loop: `,
    },
    // The record `logger.error(traceback.format_exc())` prints: `[E] Traceback (most recent call last):` and the
    // frames unprefixed (one record); it closes on its exception line. After the event-loop error it is a member of
    // that incident and names its exception; alone (some other traceback TensorRT-LLM logs) it is informational.
    {
      name: 'trtllm_logged_traceback',
      severity: 'info',
      class: 'engine_dump',
      upstream: `${PYEXEC}/py_executor.py _event_loop_wrapper logger.error(traceback.format_exc()) (index copies)`,
      incident: PROCESS_DEATH,
      // The logger's own words are part of the match: a record of another logger (a JSON record whose message is a
      // traceback) is not this one. The logger is named for its continuation lines (the frames, unprefixed).
      logger: 'trtllm',
      match: String.raw`\[TRT-LLM\](?: \[(?:MPI_Rank|RANK) \d{1,6}\])? \[E\] Traceback \(most recent call last\):\s*$`,
      follows: { match: EXCEPTION_LINE, within: 300 },
      emitUnclosed: true,
    },
    // py_executor.py _forward_step: `traceback.print_exc()` (stderr, before it: the first error), then
    // `logger.error(f"Encountered an error in forward function: {error_msg}")` and _handle_errors: every active
    // request fails with it. Older loops then died on `assert sample_state is not None, "Sampling failed"` (the
    // event-loop error above, the same incident); newer ones skip the iteration. C++ executor
    // (cpp/tensorrt_llm/executor/executorImpl.cpp): `Encountered an error in forwardAsync function: %s`.
    {
      name: 'trtllm_forward_error',
      severity: 'warning',
      class: 'engine_error',
      upstream: `${PYEXEC}/py_executor.py _forward_step (index copies 2025 → 2026); cpp executorImpl.cpp forwardAsync`,
      incident: PROCESS_DEATH,
      logger: 'trtllm',
      match: String.raw`(?<exception>Encountered an error in (?<function>forward|forwardAsync) function): (?<message>[^\n]{0,500}?)\s*$`,
    },
    // tensorrt_llm/executor/proxy.py GenerationExecutorProxy._start_executor_workers: `raise RuntimeError("Executor
    // worker returned error")` when a worker died at start-up (quoted in public reports: NVIDIA/TensorRT-LLM #7706).
    {
      name: 'trtllm_worker_start_failed',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'tensorrt_llm/executor/proxy.py _start_executor_workers (index copies; TensorRT-LLM #7706)',
      incident: PROCESS_DEATH,
      match: String.raw`(?<![\w.])RuntimeError: Executor worker returned error\s*$`,
    },
  ],
};
