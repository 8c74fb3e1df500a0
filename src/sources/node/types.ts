// The contract of a node source (issue 42): a part reads on its own timer (`every`), within its own deadline
// (`timeout`), and hands back signals; ./watch.ts runs it, one read at a time, and never on the probes' or the log
// path's turn. One file per source, one entry in ./index.ts.
import type { NodeConfig } from '../../config/node-schema.js';
import type { NodeSignal, NodeSourceKind } from '../../core/node-signals.js';
import type { Exec } from './pyspy.js';
import type { ServiceSampler } from './processes.js';
import type { FindEnv } from './find.js';

export interface NodePart {
  source: Exclude<NodeSourceKind, 'stacks'>;
  /** What the part reads (a service, the GPUs, the RAS socket), for its logs and metrics. */
  name: string;
  every: number;
  timeout: number;
  read(now: number): Promise<NodeSignal[]>;
  /** Releases what the part holds open (a connection pool). */
  close?(): Promise<void>;
}

export interface NodeContext {
  target: string;
  node: NodeConfig;
  exec: Exec;
  /** One sampler per service, shared with the stack dumps (./stacks.ts): the pids, thread names and idle times. */
  samplers: Map<string, ServiceSampler>;
  /** Where /proc and the cgroup root are (tests lay out their own). */
  env?: FindEnv;
}

export interface NodeSourceDef {
  /** The parts this config asks for (none when the source is not configured). */
  parts(ctx: NodeContext): NodePart[];
}
