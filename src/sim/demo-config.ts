// The demo's embedded wedgewatch config: watch the simulator through both hops, tail its logs, scrape its
// engines, and remediate a wedge by restarting prefill through the simulator's control API.
import { stringify } from 'yaml';
import type { Sim } from './index.js';

/** Runs without a shell: POSTs to the URL given as its argument and exits 0 on a 2xx. */
const RESTART_SCRIPT =
  "fetch(process.argv[1],{method:'POST'}).then(r=>{process.exitCode=r.ok?0:1},e=>{console.error(String(e));process.exitCode=1})";

/**
 * The demo's capture command, run without a shell: checks the process in the pid file exists (argv[1]), then prints
 * the simulated engine's py-spy-style thread dump from the URL in argv[2] (what `py-spy dump --pid` gives on a host).
 */
export const DUMP_SCRIPT =
  'process.kill(Number(process.argv[1]),0);fetch(process.argv[2]).then(r=>r.text()).then(t=>process.stdout.write(t),e=>{console.error(String(e));process.exitCode=1})';

export function demoConfig(
  sim: Sim,
  opts: {
    stateDir: string;
    listenAddress: string;
    nodePath: string;
    /** py-spy's path when it is installed: the stacks come from the PD workers themselves (issue 42). */
    pySpy?: string;
  },
): string {
  // The PD legs are real processes when python3 runs (src/sim/pd-workers.ts): the node source reads them.
  const workers = sim.workersProblem === undefined;
  const stacks = workers && opts.pySpy !== undefined;
  const endpoints = [
    ...(sim.urls.proxy ? [{ name: 'proxy', url: sim.urls.proxy }] : []),
    { name: 'router', url: sim.urls.router },
  ];
  const config = {
    web: { listenAddress: opts.listenAddress },
    stateDir: opts.stateDir,
    targets: [
      {
        name: 'sim-pd',
        endpoints,
        model: 'sim-model',
        probes: [
          // Timeouts sit above the simulator's PD timeouts, so a probe never aborts (and so never kills) it.
          {
            name: 'chat',
            kind: 'chat',
            every: '3s',
            timeout: '30s',
            maxTokens: 8,
            conn: ['fresh', 'keepalive'],
          },
          { name: 'tools', kind: 'toolcall', every: '5s', timeout: '30s', endpoints: ['router'] },
          { name: 'health', kind: 'health', every: '2s', timeout: '5s', path: '/health' },
        ],
        logs: (['prefill', 'decode', 'router'] as const).map((service) => ({
          service,
          path: sim.logFiles[service],
          packs: ['sglang', 'nixl', 'python'],
          from: 'start',
        })),
        engines: (['prefill', 'decode'] as const).map((service) => ({
          service,
          metrics: `${sim.urls[service]}/metrics`,
          every: '2s',
        })),
        detect: { wedgeAfter: 2, recoverAfter: 2, stallAfter: '20s' },
        ...(workers
          ? {
              node: {
                processes: (['prefill', 'decode'] as const).map((service) => ({
                  service,
                  pidFile: sim.pidFiles[service],
                })),
                every: '2s',
                // The demo starts the simulator, its workers and the daemon at once: a first reading can be slow.
                timeout: '5s',
                ...(stacks ? { stacks: { enabled: true, pySpy: opts.pySpy, timeout: '5s' } } : {}),
              },
            }
          : {}),
        remediate: {
          command: [opts.nodePath, '-e', RESTART_SCRIPT, `${sim.urls.control}/services/prefill/restart`],
          dryRun: false,
          after: '5s',
          cooldown: '30s',
          maxPerHour: 10,
          timeout: '10s',
        },
      },
    ],
    incidents: {
      on: ['wedged'],
      captureTimeout: '10s',
      // With py-spy the stacks are the workers' own; without it, the simulated dump stands in.
      commands: stacks
        ? []
        : [
            {
              name: 'prefill-threads',
              argv: [opts.nodePath, '-e', DUMP_SCRIPT, '${PID}', `${sim.urls.control}/services/prefill/dump`],
              pidFile: sim.pidFiles.prefill,
              timeout: '5s',
            },
          ],
    },
  };
  return `# Written by \`wedgewatch demo\`: the daemon watching the simulated SGLang PD deployment.\n${stringify(config)}`;
}
