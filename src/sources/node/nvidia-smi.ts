// GPUs from `nvidia-smi --query-gpu=… --format=csv,noheader,nounits` when no DCGM exporter is scraped (issue 42).
// The field names are nvidia-smi's own (`nvidia-smi --help-query-gpu`, the "Query GPU" section of the nvidia-smi
// manual page, driver R535 and later): index, uuid, utilization.gpu [%], memory.used and memory.total [MiB], and
// ecc.errors.uncorrected.volatile.total. With `nounits` a row reads `0, GPU-…, 97, 1024, 81559, 0`; a field the GPU
// lacks reads `[N/A]` or `[Not Supported]`. nvidia-smi has no XID field: an XID needs DCGM (or the kernel log);
// this fallback names a GPU fault from uncorrected ECC errors rising, and the utilisation beside a stall.
import type { GpuReading } from '../../core/node-signals.js';

export const SMI_FIELDS = [
  'index',
  'uuid',
  'utilization.gpu',
  'memory.used',
  'memory.total',
  'ecc.errors.uncorrected.volatile.total',
] as const;

export const smiArgv = (bin: string): string[] => [
  bin,
  `--query-gpu=${SMI_FIELDS.join(',')}`,
  '--format=csv,noheader,nounits',
];

const MIB = 1024 * 1024;
const MAX_GPUS = 64;

const num = (v: string | undefined): number | undefined => {
  if (v === undefined || !/^-?\d+(\.\d+)?$/.test(v)) return undefined;
  return Number(v);
};

/** The rows nvidia-smi printed; a row that does not have the fields is skipped (and counted). */
export function readSmi(text: string): { gpus: GpuReading[]; eccTotals: Map<string, number>; bad: number } {
  const gpus: GpuReading[] = [];
  const eccTotals = new Map<string, number>();
  let bad = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const f = line.split(',').map((x) => x.trim());
    const index = f[0];
    if (f.length !== SMI_FIELDS.length || index === undefined || !/^\d{1,3}$/.test(index)) {
      bad++;
      continue;
    }
    if (gpus.length >= MAX_GPUS) break;
    const g: GpuReading = { gpu: index };
    if (/^GPU-[0-9a-fA-F-]{1,64}$/.test(f[1]!)) g.uuid = f[1]!;
    const util = num(f[2]);
    if (util !== undefined) g.util = Math.min(1, Math.max(0, util / 100));
    const used = num(f[3]);
    const total = num(f[4]);
    if (used !== undefined) g.memUsedBytes = used * MIB;
    if (total !== undefined) g.memTotalBytes = total * MIB;
    const ecc = num(f[5]);
    if (ecc !== undefined) eccTotals.set(index, ecc);
    gpus.push(g);
  }
  return { gpus, eccTotals, bad };
}
