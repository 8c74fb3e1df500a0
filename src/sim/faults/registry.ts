// Every fault the simulator can inject. Adding one: a new file in this folder plus one entry here.
import { contextTtftGrowth } from './context_ttft_growth.js';
import { crash } from './crash.js';
import { crawl } from './crawl.js';
import { kvTransferFailure } from './kv_transfer_failure.js';
import { orphanedRequests } from './orphaned_requests.js';
import { pdHalfFailed } from './pd_half_failed.js';
import { strandedQueueEntry } from './stranded_queue_entry.js';
import { decodeStall } from './decode_stall.js';
import { engineCoreDeath } from './engine_core_death.js';
import { health503 } from './health_503.js';
import { grammarStall } from './grammar_stall.js';
import { healthFail } from './health_fail.js';
import { intermittentHang } from './intermittent_hang.js';
import { queueLeak } from './queue_leak.js';
import { rankStall } from './rank_stall.js';
import { routerCircuitOpen } from './router_circuit_open.js';
import { routerStuck } from './router_stuck.js';
import { keepaliveStall } from './keepalive_stall.js';
import { kvCorruption } from './kv_corruption.js';
import { nixlAbortUnhandled } from './nixl_abort_unhandled.js';
import { nixlTransferFailure } from './nixl_transfer_failure.js';
import { shmBroadcastHang } from './shm_broadcast_hang.js';
import { slow } from './slow.js';
import { toolcallLeak } from './toolcall_leak.js';
import { longPromptHang } from './long_prompt_hang.js';
import { toolcallArgsCorrupt } from './toolcall_args_corrupt.js';
import { reasoningGarbage } from './reasoning_garbage.js';
import { queueStarvation } from './queue_starvation.js';
import { reasoningRunaway } from './reasoning_runaway.js';
import { toolcallInReasoning } from './toolcall_in_reasoning.js';
import { metricsFrozen } from './metrics_frozen.js';
import { recurringStall } from './recurring_stall.js';
import { requestsLost } from './requests_lost.js';
import { saturation } from './saturation.js';
import type { FaultDef, FaultName } from './types.js';

export const FAULTS: Record<FaultName, FaultDef> = {
  nixl_abort_unhandled: nixlAbortUnhandled,
  decode_stall: decodeStall,
  keepalive_stall: keepaliveStall,
  toolcall_leak: toolcallLeak,
  slow,
  crash,
  health_fail: healthFail,
  health_503: health503,
  kv_corruption: kvCorruption,
  grammar_stall: grammarStall,
  intermittent_hang: intermittentHang,
  queue_leak: queueLeak,
  router_stuck: routerStuck,
  engine_core_death: engineCoreDeath,
  shm_broadcast_hang: shmBroadcastHang,
  nixl_transfer_failure: nixlTransferFailure,
  rank_stall: rankStall,
  long_prompt_hang: longPromptHang,
  toolcall_args_corrupt: toolcallArgsCorrupt,
  reasoning_garbage: reasoningGarbage,
  context_ttft_growth: contextTtftGrowth,
  kv_transfer_failure: kvTransferFailure,
  crawl,
  orphaned_requests: orphanedRequests,
  stranded_queue_entry: strandedQueueEntry,
  pd_half_failed: pdHalfFailed,
  queue_starvation: queueStarvation,
  reasoning_runaway: reasoningRunaway,
  toolcall_in_reasoning: toolcallInReasoning,
  router_circuit_open: routerCircuitOpen,
  metrics_frozen: metricsFrozen,
  recurring_stall: recurringStall,
  requests_lost: requestsLost,
  saturation,
};

export const FAULT_NAMES = Object.keys(FAULTS) as FaultName[];

export function isFaultName(name: string): name is FaultName {
  return Object.hasOwn(FAULTS, name);
}
