// The node sources (issue 42), one file each: the engine's processes (/proc), the GPUs (dcgm-exporter or nvidia-smi),
// NCCL's RAS. A new source is a new file plus an entry here. The stack dumps (./stacks.ts) are not a timer's: the
// incident capture takes them at a wedge.
import type { NodeSourceKind } from '../../core/node-signals.js';
import { gpusSource } from './gpu-source.js';
import { ncclSource } from './nccl-source.js';
import { processesSource } from './process-source.js';
import type { NodeSourceDef } from './types.js';

export const NODE_SOURCES: Record<Exclude<NodeSourceKind, 'stacks'>, NodeSourceDef> = {
  processes: processesSource,
  gpus: gpusSource,
  nccl: ncclSource,
};
