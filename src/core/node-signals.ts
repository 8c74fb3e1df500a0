// What the node tells us (issue 42): readings of the engine's own processes (/proc), its GPUs (DCGM exporter,
// nvidia-smi), NCCL's RAS and, after a capture, the Python stacks — as plain data the sources hand the core. The
// sources (src/sources/node/) measure and compare readings; the core remembers them and names a diagnosis only
// where probes already fail (src/core/verdict/candidates/node.ts). Types only.

/** Which node source a reading comes from. */
export type NodeSourceKind = 'processes' | 'gpus' | 'nccl' | 'stacks';

/** One engine process as read from /proc. */
export interface ProcessReading {
  pid: number;
  /** /proc/<pid>/comm (the kernel's name, ≤ 15 bytes; bounded, never user text of a request). */
  name: string;
  /** The one-letter state of /proc/<pid>/stat: R, S, D (uninterruptible), T/t (stopped), Z, … */
  state: string;
  /** Since when the process has been in `state` (the source's first reading of it). */
  stateSince: number;
  /** Threads in /proc/<pid>/task (exact, even past the ones read). */
  threads: number;
  /** CPU used over the last interval, in cores (1 = one core busy all the time). */
  cpu?: number;
  /** The busiest thread over the last interval, when one used most of a core (a spin). */
  spinning?: { tid: number; name: string; cpu: number };
  /** Since when no thread of it used CPU (a wait: every thread blocked); absent while it runs. */
  idleSince?: number;
  rssBytes?: number;
  /** Children in state Z (exited, never reaped). */
  zombies: number;
}

/** A thread present at one reading and gone at the next, its process still there. */
export interface LostThread {
  pid: number;
  tid: number;
  /** comm of the thread, or its Python name when a stack dump named it. */
  name: string;
  /** Between the two readings: the later one's time. */
  at: number;
}

/** One GPU, from dcgm-exporter or nvidia-smi. */
export interface GpuReading {
  /** The GPU's index as the exporter labels it (`gpu="0"`). */
  gpu: string;
  uuid?: string;
  /** The last XID error (DCGM_FI_DEV_XID_ERRORS); 0 or absent: none. */
  xid?: number;
  /** The XID is new at this reading (it changed, or appeared, since the previous one). */
  xidNew?: boolean;
  /** Utilisation 0..1 (SM activity where DCGM profiles it, else GPU utilisation). */
  util?: number;
  memUsedBytes?: number;
  memTotalBytes?: number;
  /** NVLink or ECC errors that rose since the previous reading. */
  errorsNew?: number;
}

/** A rank NCCL's RAS could not reach (missing from a communicator's data). */
export interface MissingRank {
  comm: string;
  rank: number;
  host: string;
  pid: number;
  dead: boolean;
}

/** A collective on which some ranks are behind and no rank moved since the last query. */
export interface StuckCollective {
  comm: string;
  op: string;
  /** The ranks behind, at their count, and the count the others reached. */
  behind: number[];
  at: number;
  ahead: number;
}

/** What a stack dump shows of one process, read back into a line the cause can carry. */
export interface StackSummary {
  pid: number;
  /** One line: each thread's innermost frame and how long it has used no CPU; the threads gone. */
  text: string;
}

export interface NodeSignal {
  kind: 'node';
  target: string;
  /** The engine service (processes, stacks), or `gpus` / `nccl` for the node-wide sources. */
  service: string;
  source: NodeSourceKind;
  time: number;
  processes?: ProcessReading[];
  lost?: LostThread[];
  /** The service's main process was replaced (a pid or its start time changed) since the last reading. */
  restarted?: { from: number; to: number };
  gpus?: GpuReading[];
  missing?: MissingRank[];
  stuck?: StuckCollective[];
  stacks?: StackSummary[];
  /** The source could not read (no process found, a read that timed out): nothing else is in the reading. */
  error?: string;
}
