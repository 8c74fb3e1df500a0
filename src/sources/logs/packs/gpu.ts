// Errors of the GPU and its interconnect, in any engine's log (issue 40): they need no engine-specific words, so
// every engine's default runs them. Each is `generic`: on a line an engine's own rule already read (its traceback's
// exception line, its transport-error line) it adds no event of its own; elsewhere it stands for the death it
// announces, and an engine's death after it joins its incident (PROCESS_DEATH), with this first error as the root
// cause.
import { PROCESS_DEATH } from './patterns.js';
import type { RulePack } from './types.js';

// The CUDA runtime's texts for the errors that leave a context unusable (every later call fails with them):
// cudaGetErrorString of cudaErrorIllegalAddress, cudaErrorIllegalInstruction, cudaErrorMisalignedAddress,
// cudaErrorLaunchFailure, cudaErrorECCUncorrectable, cudaErrorAssert, cudaErrorHardwareStackError,
// cudaErrorLaunchTimeout, cudaErrorInvalidPc, cudaErrorNvlinkUncorrectable and cudaErrorUnknown (what an Xid such as
// a GPU fallen off the bus reports), CUDA runtime API driver_types.h (CUDA 11 → 13). HIP's texts are the same words.
const STICKY = [
  'an illegal memory access was encountered',
  'an illegal instruction was encountered',
  'misaligned address',
  'unspecified launch failure',
  'uncorrectable ECC error encountered',
  'device-side assert triggered',
  'hardware stack error',
  'the launch timed out and was terminated',
  'invalid program counter',
  'uncorrectable NVLink error detected during the execution',
  'unknown error',
].join('|');

export const gpuPack: RulePack = {
  name: 'gpu',
  engineLines: [],
  rules: [
    // How the engines print a CUDA error: torch `torch.AcceleratorError: CUDA error: %s` / `RuntimeError: CUDA error:
    // %s` (c10/cuda/CUDAException.cpp c10_cuda_check_implementation), ggml `CUDA error: %s` (ggml/src/ggml-cuda/
    // ggml-cuda.cu:104 ggml_cuda_error, llama.cpp v0.5.0), TensorRT-LLM `[TensorRT-LLM][ERROR] CUDA runtime error in
    // %s: %s` (cpp/include/tensorrt_llm/common/cudaUtils.h check), NCCL `Cuda failure '%s'` (src/include/checks.h
    // CUDACHECK), HIP `HIP error: %s`. Anywhere in the line (a record's message, a traceback's exception line),
    // after no quote (request-echo.ts).
    {
      name: 'gpu_cuda_sticky_error',
      severity: 'critical',
      class: 'gpu_error',
      upstream:
        'CUDA runtime cudaGetErrorString texts (driver_types.h, CUDA 11 → 13) as printed by torch c10/cuda/CUDAException.cpp, ggml-cuda.cu:104, TensorRT-LLM cudaUtils.h, NCCL checks.h',
      incident: PROCESS_DEATH,
      generic: true,
      match: String.raw`(?<exception>CUDA error|CUDA runtime error|HIP error|Cuda failure|cudaError[A-Za-z]{1,40})(?: in [^\n:]{1,200})?[:,]? ?'?(?<message>${STICKY})`,
    },
    // ai-dynamo/nixl src/api/cpp/nixl_types.h nixl_status_t and nixlEnumStrings::statusStr (at 8770b655, as ./nixl.ts):
    // `NIXL_ERR_REMOTE_DISCONNECT`, a peer agent went away mid-transfer: every transfer to it fails until it comes
    // back. Printed bare by the Python bindings' exceptions (`nixl._bindings.nixlRemoteDisconnectError:
    // NIXL_ERR_REMOTE_DISCONNECT`) and by engines that log the status (SGLang's own line is nixl_transport_error).
    {
      name: 'gpu_nixl_remote_disconnect',
      severity: 'critical',
      class: 'connection_lost',
      upstream: 'ai-dynamo/nixl src/api/cpp/nixl_types.h nixl_status_t, statusStr (at 8770b655)',
      incident: 'nixl_agent_peer_lost',
      generic: true,
      // The exception's name is read behind the status once it matched (read ahead of it, every position tried up to
      // 120 characters).
      match: String.raw`NIXL_ERR_REMOTE_DISCONNECT\b(?<=(?:(?<![\w.])(?<exception>[A-Za-z_][\w.]{0,120}(?:Error|Exception)): |^|[\s(\[=])NIXL_ERR_REMOTE_DISCONNECT)`,
    },
    // openucx/ucx src/ucs/debug/log.c ucs_log_default_handler: `[%lu.%06lu] [%s:%d:%d] %16s:%-4u %-4s %-5s %s`, so
    // `… ucp_worker.c:1866 UCX  ERROR …`; the statuses of src/ucs/type/status.c ucs_status_string that mean a peer or
    // the fabric failed (`Endpoint timeout`, `Connection reset by remote peer`, `Transport retry count exceeded`,
    // `Remote access error`, `Destination is unreachable`). Transfers over that endpoint fail (NIXL, Mooncake,
    // NCCL's UCX plugin): a warning that names what failed.
    {
      name: 'gpu_ucx_error',
      severity: 'warning',
      class: 'connection_lost',
      upstream:
        'openucx/ucx src/ucs/debug/log.c ucs_log_default_handler, src/ucs/type/status.c ucs_status_string (1.14 → 1.19)',
      generic: true,
      // `UCX  ERROR` is the format's padded level (`%-4s %-5s`): the whole of it is the prefilter's literal.
      match: String.raw`\bUCX  ERROR [^\n]{0,300}?(?<message>Endpoint timeout|Connection reset by remote peer|Transport retry count exceeded|Remote access error|Destination is unreachable)`,
    },
  ],
};
