// GPUs from dcgm-exporter's /metrics (issue 42). Families and labels as dcgm-exporter writes them:
// NVIDIA/dcgm-exporter etc/default-counters.csv @ d5e5f510a1b6b393f39a43293ccd9dc985defc79 lists
// DCGM_FI_DEV_XID_ERRORS ("Value of the last XID error encountered", a gauge), DCGM_FI_DEV_GPU_UTIL (%),
// DCGM_FI_DEV_FB_USED / _FB_FREE (MiB) and DCGM_FI_PROF_GR_ENGINE_ACTIVE (ratio); DCGM_FI_PROF_SM_ACTIVE and the
// NVLink error counters (DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL, _CRC_DATA_, _REPLAY_, _RECOVERY_) are there
// commented out, read when an operator enables them. Each sample is labelled
// `gpu="<index>",UUID="<uuid>",pci_bus_id=…,device="nvidia<N>",modelName=…` (internal/pkg/rendermetrics/
// render_metrics.go gpuMetricsFormat, same commit). Parsed with the bounded exposition parser the engine scrapes use.
import type { GpuReading } from '../../core/node-signals.js';
import { parsePrometheusText, type Sample } from '../engines/promtext.js';

export const DCGM_FAMILIES = {
  xid: 'DCGM_FI_DEV_XID_ERRORS',
  smActive: 'DCGM_FI_PROF_SM_ACTIVE',
  grActive: 'DCGM_FI_PROF_GR_ENGINE_ACTIVE',
  util: 'DCGM_FI_DEV_GPU_UTIL',
  fbUsed: 'DCGM_FI_DEV_FB_USED',
  fbFree: 'DCGM_FI_DEV_FB_FREE',
} as const;

export const NVLINK_ERROR_FAMILIES = [
  'DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL',
  'DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL',
  'DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL',
  'DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL',
] as const;

const FAMILIES = new Set<string>([...Object.values(DCGM_FAMILIES), ...NVLINK_ERROR_FAMILIES]);
const LABELS = new Set(['gpu', 'UUID', 'uuid']);
const MIB = 1024 * 1024;
/** GPUs per node, at most (an 8-GPU node is the common maximum; a bound against a hostile exporter). */
const MAX_GPUS = 64;

/** Cumulative NVLink error counts per GPU: the next reading's increase is `errorsNew`. */
export type ErrorTotals = Map<string, number>;

/** The GPUs in a dcgm-exporter body (only the families above are retained). */
export function readDcgm(text: string): { gpus: GpuReading[]; errorTotals: ErrorTotals; problem?: string } {
  const parsed = parsePrometheusText(text, {
    families: FAMILIES,
    labels: LABELS,
    limits: { maxSeriesPerFamily: MAX_GPUS, maxSeries: MAX_GPUS * FAMILIES.size },
  });
  const by = new Map<string, GpuReading>();
  const errorTotals: ErrorTotals = new Map();
  const gpuOf = (s: Sample): GpuReading | undefined => {
    const gpu = s.labels.gpu;
    if (gpu === undefined || !/^\d{1,3}$/.test(gpu)) return undefined;
    let g = by.get(gpu);
    if (g === undefined) {
      if (by.size >= MAX_GPUS) return undefined;
      g = { gpu };
      const uuid = s.labels.UUID ?? s.labels.uuid;
      if (uuid !== undefined && /^GPU-[0-9a-fA-F-]{1,64}$/.test(uuid)) g.uuid = uuid;
      by.set(gpu, g);
    }
    return g;
  };
  const util = new Map<string, { sm?: number; gr?: number; pct?: number }>();
  for (const s of parsed.samples) {
    const g = gpuOf(s);
    if (g === undefined || !Number.isFinite(s.value)) continue;
    const u = util.get(g.gpu) ?? {};
    util.set(g.gpu, u);
    switch (s.name) {
      case DCGM_FAMILIES.xid:
        if (Number.isInteger(s.value) && s.value >= 0 && s.value < 1e6) g.xid = s.value;
        break;
      case DCGM_FAMILIES.smActive:
        u.sm = s.value;
        break;
      case DCGM_FAMILIES.grActive:
        u.gr = s.value;
        break;
      case DCGM_FAMILIES.util:
        u.pct = s.value / 100;
        break;
      case DCGM_FAMILIES.fbUsed:
        g.memUsedBytes = s.value * MIB;
        break;
      case DCGM_FAMILIES.fbFree:
        g.memTotalBytes = (g.memTotalBytes ?? 0) + s.value * MIB;
        break;
      default:
        if ((NVLINK_ERROR_FAMILIES as readonly string[]).includes(s.name))
          errorTotals.set(g.gpu, (errorTotals.get(g.gpu) ?? 0) + s.value);
    }
  }
  for (const g of by.values()) {
    const u = util.get(g.gpu) ?? {};
    // SM activity says whether kernels run; engine activity next; the coarse utilisation last.
    const v = u.sm ?? u.gr ?? u.pct;
    if (v !== undefined) g.util = Math.min(1, Math.max(0, v));
    if (g.memTotalBytes !== undefined && g.memUsedBytes !== undefined) g.memTotalBytes += g.memUsedBytes;
  }
  const gpus = [...by.values()];
  const problem =
    gpus.length === 0
      ? parsed.lines === 0 || parsed.bad > parsed.lines
        ? 'the DCGM exporter answered something that is not Prometheus text'
        : `no ${DCGM_FAMILIES.xid} or utilisation series with a gpu label`
      : undefined;
  return { gpus, errorTotals, ...(problem !== undefined ? { problem } : {}) };
}

/**
 * Marks what is new against the previous reading: an XID that changed or appeared (a nonzero XID at the first
 * reading is history, not news), NVLink errors that rose.
 */
export function compareGpus(
  now: GpuReading[],
  prev: ReadonlyMap<string, GpuReading> | undefined,
  errors: ErrorTotals,
  prevErrors: ErrorTotals | undefined,
): GpuReading[] {
  return now.map((g) => {
    const before = prev?.get(g.gpu);
    const out: GpuReading = { ...g };
    if (prev !== undefined && g.xid !== undefined && g.xid !== 0 && g.xid !== (before?.xid ?? 0))
      out.xidNew = true;
    const e = errors.get(g.gpu);
    const eb = prevErrors?.get(g.gpu);
    if (e !== undefined && eb !== undefined && e > eb) out.errorsNew = e - eb;
    return out;
  });
}
