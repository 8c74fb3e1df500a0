// A real process per simulated PD leg (issue 42), so the node sources read what they would read on a real engine:
// a Python process whose scheduler thread waits in `KVPoll.poll` and whose prefill leg runs a NIXL-style
// `bootstrap_thread` blocked on its socket. On the `nixl_abort_unhandled` fault the simulator sends it an ABORT
// frame; the thread fails its guard assertion and dies, the process carries on — as SGLang's prefill does
// (python/sglang/srt/disaggregation/nixl/conn.py bootstrap_thread; see src/sim/faults/nixl_abort_unhandled.ts).
// Threads name themselves (prctl PR_SET_NAME, as CPython 3.14 does for every thread) so /proc shows them; py-spy shows
// the Python names. Without python3 on PATH the simulator runs without workers and says so.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The worker, run as `python3 <file> <role>` (a file, so stacks name it); commands on stdin, one per line. */
export const WORKER_PY = String.raw`
import ctypes, os, sys, threading

def _name(n):
    try:
        ctypes.CDLL(None).prctl(15, ctypes.c_char_p(n.encode()[:15]), 0, 0, 0)
    except Exception:
        pass

GUARD = b"NixlMsgGuard"
r, w = os.pipe()

def recv_multipart():
    return os.read(r, 64)

def bootstrap_thread():
    _name("bootstrap_thread")
    while True:
        msg = recv_multipart()
        assert msg == GUARD, "First message should be b'NixlMsgGuard'. Foreign traffic?"

class KVPoll:
    def __init__(self):
        self.ready = threading.Event()
    def poll(self):
        self.ready.wait()

def event_loop_normal_disagg():
    _name("scheduler")
    KVPoll().poll()

def spin():
    _name("spinner")
    while True:
        pass

role = sys.argv[1] if len(sys.argv) > 1 else "prefill"
threading.Thread(target=event_loop_normal_disagg, name="scheduler", daemon=True).start()
if role == "prefill":
    threading.Thread(target=bootstrap_thread, name="bootstrap_thread", daemon=True).start()
print("ready", flush=True)
for line in sys.stdin:
    cmd = line.strip()
    if cmd == "abort":
        os.write(w, b"ABORT")
    elif cmd == "spin":
        threading.Thread(target=spin, name="spinner", daemon=True).start()
    elif cmd == "quit":
        break
`;

export interface PdWorker {
  pid: number;
  /** The unguarded ABORT frame: the bootstrap thread dies, the process lives on. */
  abort(): void;
  /** Starts a thread that spins on a core (tests tell it from a wait by CPU time). */
  spin(): void;
  stop(): Promise<void>;
}

/** Starts a worker and waits for it to say it is ready; undefined (with why) when python3 cannot run. */
export async function startPdWorker(
  role: 'prefill' | 'decode',
  python = 'python3',
): Promise<PdWorker | { problem: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'wedgewatch-pd-worker-'));
  const script = join(dir, 'pd_worker.py');
  writeFileSync(script, WORKER_PY);
  const clean = () => rmSync(dir, { recursive: true, force: true });
  let child: ChildProcess;
  try {
    child = spawn(python, [script, role], { stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (err) {
    clean();
    return { problem: `${python}: ${(err as Error).message}` };
  }
  child.once('exit', clean);
  child.stderr?.resume();
  const ready = await new Promise<string | undefined>((resolve) => {
    const timer = setTimeout(() => resolve('did not start within 10 s'), 10_000);
    child.once('error', (e) => {
      clearTimeout(timer);
      resolve(`${python}: ${e.message}`);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(`exited with code ${code}`);
    });
    child.stdout?.once('data', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
  });
  if (ready !== undefined || child.pid === undefined) {
    child.kill('SIGKILL');
    return { problem: ready ?? 'no pid' };
  }
  const send = (cmd: string) => {
    if (child.exitCode === null) child.stdin?.write(`${cmd}\n`);
  };
  return {
    pid: child.pid,
    abort: () => send('abort'),
    spin: () => send('spin'),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGKILL');
      await exited;
    },
  };
}
