// A py-spy-style thread dump of a simulated engine: what `py-spy dump --pid` prints for a live SGLang scheduler,
// which SGLang's own scheduler watchdog dumps before it fires (pyspy_dump_schedulers(),
// python/sglang/srt/utils/watchdog.py @ac0a8a1). A dead bootstrap thread is simply absent, as on a real process,
// and the queues it leaves behind are listed. The demo's capture command prints this into the incident bundle.
import type { PdModel } from './pd.js';

export function simThreadDump(role: 'prefill' | 'decode', pd: PdModel, pid: number): string {
  const lines = [
    `Process ${pid}: python3 -m sglang.launch_server --disaggregation-mode ${role} (simulated)`,
    'Python v3.11.9 (/usr/bin/python3.11)',
    '',
    `Thread ${pid} (idle): "MainThread"`,
    role === 'prefill'
      ? '    event_loop_normal_disagg_prefill (sglang/srt/disaggregation/prefill.py)'
      : '    event_loop_normal_disagg_decode (sglang/srt/disaggregation/decode.py)',
    '    run_scheduler_process (sglang/srt/managers/scheduler.py)',
  ];
  if (role === 'prefill') {
    const p = pd.prefill;
    if (p.threadAlive) {
      lines.push(
        `Thread ${pid + p.threadNumber} (idle): "Thread-${p.threadNumber} (bootstrap_thread)"`,
        '    recv_multipart (zmq/sugar/socket.py)',
        '    bootstrap_thread (sglang/srt/disaggregation/nixl/conn.py)',
      );
    }
    lines.push(
      '',
      `# bootstrap thread: ${p.threadAlive ? 'alive' : 'not running (exited)'}`,
      `# bootstrap queue: ${p.bootstrapQueue.size}, waiting: ${p.waiting.length}, inflight transfers: ${p.inflight.size}`,
    );
  } else {
    const d = pd.decode;
    lines.push(
      '',
      `# scheduler: ${d.stalled ? 'stalled' : 'running'}, steps ${d.steps}`,
      `# running: ${d.running.length}, waiting: ${d.waiting.length}, transfer queue: ${d.transferQueue.size}`,
    );
  }
  return lines.join('\n') + '\n';
}
