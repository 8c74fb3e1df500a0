// What the core remembers of the node (issue 42): the latest reading of each service's processes, the threads lost,
// GPU faults, missing NCCL ranks and the last stack summary — each list bounded, each entry timed, so a reading that
// stops arriving cannot hold a cause forever. Types only; src/core/reduce/node.ts changes it.
import type {
  GpuReading,
  LostThread,
  MissingRank,
  ProcessReading,
  StackSummary,
  StuckCollective,
} from './node-signals.js';

/** The kinds of node event the journal records (the `what` of a `node` journal entry). */
export type NodeEventKind =
  | 'thread_lost'
  | 'process_restarted'
  | 'process_stopped'
  | 'gpu_fault'
  | 'rank_missing'
  | 'collective_stuck'
  | 'stacks'
  | 'source_error';

export interface ServiceNodeMemory {
  at: number;
  processes: ProcessReading[];
  /** The last reading could not be made (no process found, a read timed out). */
  error?: string;
}

export interface NodeMemory {
  services: Record<string, ServiceNodeMemory>;
  /** Threads lost, newest last (bounded), with the service they belonged to. */
  lost: Array<LostThread & { service: string }>;
  /** GPU faults (a new XID, or ECC/NVLink errors rising), newest last (bounded), each with what it means. */
  faults: Array<{ gpu: string; uuid?: string; text: string; at: number }>;
  /** The GPUs as last read. */
  gpus?: { at: number; gpus: GpuReading[] };
  /** NCCL ranks missing at the last RAS query (replaced by each query). */
  missing?: { at: number; ranks: MissingRank[]; stuck: StuckCollective[] };
  /** What the last stack dump showed, per service. */
  stacks?: Record<string, { at: number; summaries: StackSummary[] }>;
}

/** Kept per list: enough for one incident's story, small enough to clone on every signal. */
export const NODE_KEEP = 16;
