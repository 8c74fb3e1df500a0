// vLLM only. A rank hangs (a stuck collective, a deadlocked kernel) and stops reading the engine core's
// shared-memory broadcast queue: the core's step never returns. vllm/distributed/device_communicators/
// shm_broadcast.py MessageQueue.acquire_write logs "No available shared memory broadcast block found in 60
// seconds. ..." every VLLM_RINGBUFFER_WARNING_INTERVAL; no tokens come out, requests hang, the API server's
// gauges freeze at the last scheduler stats (Running: N reqs) and the stats line shows 0.0 tokens/s once before
// the idle rule drops it to DEBUG. /health stays 200 (AsyncLLM.check_health is a flag check).
import type { FaultDef } from './types.js';

export const shmBroadcastHang: FaultDef = {
  name: 'shm_broadcast_hang',
  engines: ['vllm'],
  summary:
    'the engine core blocks in a shared-memory broadcast: no tokens, requests hang, `No available shared memory broadcast block` every `interval` s, /health 200',
  params: {
    interval: {
      default: 60,
      help: 'VLLM_RINGBUFFER_WARNING_INTERVAL: seconds between the wait lines, 1 to 3600',
    },
  },
  validate(p) {
    const s = Number(p.interval);
    return Number.isFinite(s) && s >= 1 && s <= 3600
      ? undefined
      : `interval must be a number of seconds from 1 to 3600 (got ${JSON.stringify(p.interval)})`;
  },
  onEnable(ctl, p) {
    ctl.vllm?.setShmHang(true, Number(p.interval) * 1000);
  },
  onDisable(ctl) {
    ctl.vllm?.setShmHang(false, 0);
  },
};
