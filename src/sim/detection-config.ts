// The watchdog configuration the detector tests and bench/detect-latency use against a simulator: the issue's
// test settings (probes every 2 s with a 1 s timeout, no jitter), every hop, logs, engine scrapes.
import { stringify } from 'yaml';
import type { Sim } from './index.js';

/** A config (YAML text) watching `sim` as target `sim`; `extra` adds or replaces target fields. */
export function simDetectionConfig(sim: Sim, stateDir: string, extra: Record<string, unknown> = {}): string {
  const hops = [...(sim.urls.proxy ? ['proxy'] : []), 'router'];
  return stringify({
    stateDir,
    targets: [
      {
        name: 'sim',
        endpoints: [
          ...(sim.urls.proxy ? [{ name: 'proxy', url: sim.urls.proxy }] : []),
          { name: 'router', url: sim.urls.router },
          { name: 'prefill', url: sim.urls.prefill },
          { name: 'decode', url: sim.urls.decode },
        ],
        model: 'sim-model',
        probes: [
          {
            name: 'chat',
            kind: 'chat',
            every: '2s',
            timeout: '1s',
            jitter: 0,
            maxTokens: 2,
            endpoints: hops,
            conn: ['fresh', 'keepalive'],
            ttftObjective: '150ms',
          },
          {
            name: 'tools',
            kind: 'toolcall',
            every: '2s',
            // The default matrix is seven requests in a row, and the timeout bounds the whole run.
            timeout: '5s',
            jitter: 0,
            endpoints: ['router'],
            conn: ['fresh'],
          },
          {
            name: 'health',
            kind: 'health',
            every: '2s',
            timeout: '1s',
            jitter: 0,
            path: '/health',
            endpoints: ['router', 'prefill', 'decode'],
          },
          {
            name: 'info',
            kind: 'serverinfo',
            every: '2s',
            timeout: '1s',
            jitter: 0,
            path: '/get_server_info',
            endpoints: ['decode'],
          },
        ],
        logs: (['prefill', 'decode', 'router'] as const).map((service) => ({
          service,
          path: sim.logFiles[service],
          packs: ['sglang', 'nixl', 'python'],
          from: 'end',
        })),
        engines: (['prefill', 'decode'] as const).map((service) => ({
          service,
          metrics: `${sim.urls[service]}/metrics`,
          every: '1s',
          timeout: '1s',
        })),
        detect: { wedgeAfter: 2, recoverAfter: 2, downAfter: 2, stallAfter: '3s', confirmInterval: '2s' },
        ...extra,
      },
    ],
  });
}
