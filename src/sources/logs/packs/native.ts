// How a native process dies, in any engine's log (issue 40): a C++ exception nobody caught, ggml's abort, the shell
// or the runtime reporting a death by a signal. Each is a line of its own at the start of the line (after a
// compose prefix: a container runtime's wrapper is gone by then), so text inside a record is not one. All of one
// death are one incident (PROCESS_DEATH), whose root cause is its first error (a CUDA error, the exception).
import { COMPOSE_PREFIX, PROCESS_DEATH } from './patterns.js';
import type { RulePack } from './types.js';

export const nativePack: RulePack = {
  name: 'native',
  engineLines: [],
  rules: [
    // gcc libstdc++-v3/libsupc++/vterminate.cc __verbose_terminate_handler (GCC 4 → 15): `terminate called after
    // throwing an instance of '%s'` then `  what():  %s`, or `terminate called without an active exception` /
    // `terminate called recursively`; then abort(). torch's watchdog death ends so (c10::DistBackendError), and so
    // does any C++ engine's unhandled exception.
    {
      name: 'native_cpp_terminate',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'gcc libstdc++-v3/libsupc++/vterminate.cc __verbose_terminate_handler (GCC 4 → 15)',
      incident: PROCESS_DEATH,
      generic: true,
      match: String.raw`^${COMPOSE_PREFIX}terminate called (?:after throwing an instance of '(?<exception>[^'\n]{1,200})'|without an active exception|recursively)`,
      follows: {
        match: String.raw`^${COMPOSE_PREFIX}\s{0,8}what\(\):\s{1,8}(?<message>\S[^\n]{0,499})`,
        within: 2,
      },
      emitUnclosed: true,
    },
    // ggml/src/ggml.c:253 ggml_abort (llama.cpp v0.5.0): `%s:%d: ` then the message, then a backtrace and abort():
    // GGML_ASSERT's `GGML_ASSERT(%s) failed`, a backend's `CUDA error` (ggml-cuda.cu:108, after the error's own lines),
    // llama-server's kill switch `fatal error - please provide logs and repro in …` (tools/server/
    // server-context.cpp:3656). The file is the build's path of a C/C++/CUDA source.
    {
      name: 'native_ggml_abort',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'ggml/src/ggml.c:253 ggml_abort, ggml/include/ggml.h GGML_ASSERT (ggml-org/llama.cpp v0.5.0)',
      incident: PROCESS_DEATH,
      generic: true,
      match: String.raw`^${COMPOSE_PREFIX}(?<file>[^\s:'"]{1,300}\.(?:c|cc|cpp|cu|cuh|m|mm|h|hpp)):(?<line>\d{1,6}): (?<exception>GGML_ASSERT\([^\n]{1,400}\) failed|CUDA error|ROCm error|HIP error|MUSA error|SYCL error|Vulkan error|Metal error|CANN error|fatal error)(?: - (?<message>[^\n]{1,400}?))?\s*$`,
    },
    // bash jobs.c/nojobs.c and the signal list of siglist.c: a process of a script or a shell killed by a signal is
    // reported `Segmentation fault (core dumped)`, `Aborted (core dumped)`, `Killed` (SIGKILL: the OOM killer, a
    // kill -9), `Bus error`, `Illegal instruction`, `Floating point exception`, and by a script with its line and
    // pid (`/entrypoint.sh: line 12:  4242 Killed  python3 -m …`). The whole line is the report: text that only
    // contains the words is not one. SIGTERM (`Terminated`) is how an orderly stop ends: not a death to report.
    {
      name: 'native_killed_by_signal',
      severity: 'critical',
      class: 'engine_death',
      upstream: 'bash jobs.c/nojobs.c, siglist.c (bash 4 → 5.2)',
      incident: PROCESS_DEATH,
      generic: true,
      match: String.raw`^${COMPOSE_PREFIX}(?:[^\n:]{1,200}: line \d{1,6}: {1,8}(?<pid>\d{1,10}) )?(?<exception>Segmentation fault|Aborted|Killed|Bus error|Illegal instruction|Floating point exception)(?: \(core dumped\))?(?: {2,}(?<command>[^\n]{1,300}))?\s*$`,
    },
  ],
};
