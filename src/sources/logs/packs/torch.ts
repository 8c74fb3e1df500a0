// PyTorch distributed (c10d) collective signatures, for any engine that runs tensor parallelism on torch: SGLang,
// vLLM, TensorRT-LLM's torch path, Dynamo's workers. Read from pytorch/pytorch
// torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (the stored copy at cf1380dfb6c8552c8cdb791a85a89499775ad409,
// main 2026) with the torch 2.1 → 2.5 wordings kept. torch writes these through glog/c10 logging on stderr
// (`[rank1]:[E1129 14:09:40.426415540 ProcessGroupNCCL.cpp:629] [PG ID 0 PG GUID 0(default_pg) Rank 1] …`), so no
// rule is anchored to an engine's logger. One hung collective prints a chain on every rank (the timeout on the
// rank that hung, the dump signal on its peers, the failure detected by the watchdog, then the abort's `what():`
// repeating it): one incident, and the process death it ends in too (the abort's `terminate called …`, the engine's
// `… crashed`), so the rules share the PROCESS_DEATH key (issue 40; `torch_collective` before) and the first line is
// the event.
import { PROCESS_DEATH } from './patterns.js';
import type { RulePack } from './types.js';

// The rank of a line is in torch's prefix (`[PG ID 0 PG GUID 0(default_pg) Rank 3] `, or `[Rank 3] ` before 2.4) and in
// the `[rank3]:` stderr tag; the rules after the first start at their own words instead, so the regex engine
// skips to them (an optional prefix group first made a line without them cost ~1 µs per character).

export const torchPack: RulePack = {
  name: 'torch',
  engineLines: [],
  rules: [
    // ProcessGroupNCCL.cpp WorkNCCL::checkTimeout (torch 2.1 → 2.9): `[Rank N] Watchdog caught collective
    // operation timeout: WorkNCCL(SeqNum=…, OpType=…, …) ran for N milliseconds before timing out.` The rank that
    // hung; torch then takes the process down (TORCH_NCCL_ASYNC_ERROR_HANDLING). Was `sglang_nccl_watchdog_timeout`
    // in the sglang pack before issue 27.
    {
      name: 'torch_nccl_watchdog_timeout',
      severity: 'critical',
      class: 'collective_timeout',
      upstream: 'torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp WorkNCCL::checkTimeout (torch 2.1 → 2.9)',
      incident: PROCESS_DEATH,
      match: String.raw`Rank (?<rank>\d+)\] Watchdog caught collective operation timeout(?:: WorkNCCL\(SeqNum=(?<seq>\d+), OpType=(?<op>\w{1,32}))?`,
    },
    // ProcessGroupNCCL.cpp getNCCLWatchdogTimeoutErrorMsg (torch 2.4 → 2.9): `{logPrefix}Received a dump signal
    // due to a collective timeout from {this local rank | rank N} and we will try our best to dump the debug info.
    // Last enqueued NCCL work: …, last completed NCCL work: ….` A peer rank's side of the hang: the collective
    // it waits in will never finish, and the watchdog takes this process down too. torch 2.7 prints `from  rank 7`
    // (extraMsg begins with a space), hence one or two spaces.
    {
      name: 'torch_collective_dump_signal',
      severity: 'critical',
      class: 'collective_timeout',
      upstream:
        'torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp getNCCLWatchdogTimeoutErrorMsg (torch 2.4 → 2.9)',
      incident: PROCESS_DEATH,
      match: String.raw`Received a dump signal due to a collective timeout from {1,2}(?<from>this local rank|rank (?<peer>\d+))`,
    },
    // ProcessGroupNCCL.cpp Watchdog::runLoop (torch 2.6 → 2.9): `{logPrefix} failure detected by watchdog at work
    // sequence id: N PG status: last enqueued work: …, last completed work: …`; torch 2.2 → 2.5: `{logPrefix}Exception
    // (either an error or timeout) detected by watchdog at work: N, last enqueued NCCL work: …`.
    {
      name: 'torch_watchdog_failure_detected',
      severity: 'critical',
      class: 'collective_timeout',
      upstream: 'torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp watchdog loop (torch 2.2 → 2.9)',
      incident: PROCESS_DEATH,
      // The shared words outside the alternation: the prefilter needs a literal every match contains (issue 27: an
      // alternation of two phrases gave none, and the whole rule set then read every line).
      match: String.raw`(?:failure|Exception \(either an error or timeout\)) detected by watchdog at work(?: sequence id)?: (?<seq>\d+)`,
    },
    // ProcessGroupNCCL.cpp ncclCommWatchdog catch (torch 2.2 → 2.9; `NCCL watchdog thread` before 2.2): `{logPrefix}
    // Process group watchdog thread terminated with exception: {what}`. The watchdog thread is gone and it
    // rethrows, so the process aborts (`terminate called after throwing an instance of 'c10::DistBackendError'`).
    {
      name: 'torch_watchdog_thread_terminated',
      severity: 'critical',
      class: 'collective_timeout',
      upstream: 'torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp ncclCommWatchdog (torch 2.1 → 2.9)',
      incident: PROCESS_DEATH,
      match: String.raw`(?:Process group|NCCL) watchdog thread terminated with exception: `,
    },
    // torch/csrc/distributed/c10d/NCCLUtils.hpp C10D_NCCL_CHECK (torch 1.13 → 2.9): `NCCL error in: {file}:{line},
    // {ncclGetErrorString}, NCCL version {v}` (`unhandled cuda error`, `unhandled system error`, `remote process
    // exited or there was a network error`, `internal error`), raised as torch.distributed.DistBackendError: the
    // communicator is broken; every rank's next collective fails or hangs.
    {
      name: 'torch_nccl_error',
      severity: 'critical',
      class: 'gpu_error',
      upstream: 'torch/csrc/distributed/c10d/NCCLUtils.hpp C10D_NCCL_CHECK (torch 1.13 → 2.9)',
      incident: PROCESS_DEATH,
      // On an engine's own traceback line (the exception its death record closes on) it adds nothing.
      generic: true,
      match: String.raw`(?=(?<exception>NCCL error))NCCL error in: (?<file>[^\s,]{1,300}), (?<message>[^\n,(]{1,200}?)(?: \(run with NCCL_DEBUG=INFO for details\))?, NCCL version`,
    },
  ],
};
