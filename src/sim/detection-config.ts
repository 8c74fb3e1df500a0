// The watchdog configuration the detector tests and bench/detect-latency use against a simulator: the issue's
// test settings (probes every 2 s with a 1 s timeout, no jitter), every hop, logs, engine scrapes.
import { stringify } from 'yaml';
import type { Sim } from './index.js';
import type { VllmSim } from './vllm/index.js';

const DETECT = { wedgeAfter: 2, recoverAfter: 2, downAfter: 2, stallAfter: '3s', confirmInterval: '2s' };

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
        detect: DETECT,
        ...extra,
      },
    ],
  });
}

/** The same settings watching a vLLM simulator (`sim --engine vllm`): one API server, its log, its /metrics. */
export function vllmDetectionConfig(
  sim: VllmSim,
  stateDir: string,
  extra: Record<string, unknown> = {},
): string {
  const probe = { every: '2s', timeout: '1s', jitter: 0, endpoints: ['server'] };
  return stringify({
    stateDir,
    targets: [
      {
        name: 'sim',
        endpoints: [{ name: 'server', url: sim.urls.server }],
        model: 'sim-model',
        probes: [
          {
            name: 'chat',
            kind: 'chat',
            ...probe,
            maxTokens: 2,
            conn: ['fresh', 'keepalive'],
            ttftObjective: '150ms',
          },
          { name: 'tools', kind: 'toolcall', ...probe, timeout: '5s', conn: ['fresh'] },
          { name: 'health', kind: 'health', ...probe, path: '/health' },
        ],
        logs: [{ service: 'server', path: sim.logFiles.server, packs: ['vllm', 'python'], from: 'end' }],
        engines: [{ service: 'server', metrics: `${sim.urls.server}/metrics`, every: '1s', timeout: '1s' }],
        detect: DETECT,
        ...extra,
      },
    ],
  });
}
