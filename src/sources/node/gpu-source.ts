// GPUs (issue 42): dcgm-exporter's /metrics when configured (./dcgm.ts), else `nvidia-smi --query-gpu` (./nvidia-smi.ts),
// every `node.gpus.every`. What is new against the previous reading (an XID, errors rising) is marked here; the core
// names a `gpu_fault` from it only while probes fail.
import type { GpuReading, NodeSignal } from '../../core/node-signals.js';
import { Agent, request } from '../../lib/http/undici.js';
import { compareGpus, readDcgm, type ErrorTotals } from './dcgm.js';
import { readSmi, smiArgv } from './nvidia-smi.js';
import type { NodeContext, NodeSourceDef } from './types.js';

/** A dcgm-exporter body of 8 GPUs with every default counter is ~30 kB; past this it is not read. */
export const MAX_DCGM_BYTES = 4 * 1024 * 1024;

async function fetchCapped(agent: Agent, url: string, timeoutMs: number, max: number): Promise<string> {
  const res = await request(url, {
    dispatcher: agent,
    signal: AbortSignal.timeout(timeoutMs),
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of res.body as AsyncIterable<Buffer>) {
    n += c.length;
    if (n > max) {
      res.body.destroy();
      throw new Error(`DCGM exporter body over ${max} bytes`);
    }
    chunks.push(c);
  }
  if (res.statusCode !== 200) throw new Error(`DCGM exporter answered HTTP ${res.statusCode}`);
  return Buffer.concat(chunks).toString('utf8');
}

export const gpusSource: NodeSourceDef = {
  parts(ctx: NodeContext) {
    const g = ctx.node.gpus;
    if (g === undefined) return [];
    let prev: Map<string, GpuReading> | undefined;
    let prevErrors: ErrorTotals | undefined;
    const agent = new Agent({ connections: 1, keepAliveTimeout: 1000, pipelining: 0 });
    return [
      {
        source: 'gpus' as const,
        name: g.dcgm !== undefined ? 'dcgm' : 'nvidia-smi',
        every: g.every,
        timeout: g.timeout,
        async read(now: number): Promise<NodeSignal[]> {
          const base = {
            kind: 'node' as const,
            target: ctx.target,
            service: 'gpus',
            source: 'gpus' as const,
            time: now,
          };
          let gpus: GpuReading[];
          let errors: ErrorTotals;
          if (g.dcgm !== undefined) {
            const r = readDcgm(await fetchCapped(agent, g.dcgm, g.timeout, MAX_DCGM_BYTES));
            if (r.problem !== undefined) return [{ ...base, error: r.problem }];
            ({ gpus, errorTotals: errors } = r);
          } else {
            const out = await ctx.exec(smiArgv(g.nvidiaSmi!), {
              env: {},
              timeoutMs: g.timeout,
              maxOutputBytes: 256 * 1024,
              killAfterMs: 500,
            });
            if (out.result !== 'success')
              return [
                { ...base, error: `nvidia-smi ${out.result}: ${(out.error ?? out.output).slice(0, 200)}` },
              ];
            const r = readSmi(out.output);
            if (r.gpus.length === 0)
              return [
                { ...base, error: `nvidia-smi printed no GPU row (${r.bad} rows not in its CSV shape)` },
              ];
            ({ gpus, eccTotals: errors } = r);
          }
          const marked = compareGpus(gpus, prev, errors, prevErrors);
          prev = new Map(gpus.map((x) => [x.gpu, x]));
          prevErrors = errors;
          return [{ ...base, gpus: marked }];
        },
        close: () => agent.close(),
      },
    ];
  },
};
