// The demo's embedded wedgewatch config: watch the simulator through both hops, tail its logs, scrape its
// engines, and remediate a wedge by restarting prefill through the simulator's control API. With a second
// deployment behind a model gateway (`traffic`), both form one pool and a wedged one is drained from the gateway
// until it recovers.
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

/** The second deployment and the model gateway in front of both (`wedgewatch demo`'s traffic path, issue 43). */
export interface DemoTraffic {
  /** The second PD deployment, serving the same model: the one that keeps the users while the first is out. */
  peer: Sim;
  /** The model gateway's URL (src/sim/gateway.ts): its /workers API is what a drain calls. */
  gateway: string;
}

export const DEMO_TARGET = 'sim-pd';
export const DEMO_PEER_TARGET = 'sim-pd-b';
export const DEMO_POOL = 'deployments';

/**
 * How the demo watches one simulated deployment: both hops, its logs and its engines, and its PD legs' processes
 * when they are real ones (src/sim/pd-workers.ts, python3 present): the node source reads them, and py-spy, when
 * installed, dumps their stacks (issue 42).
 */
function watched(sim: Sim, pySpy?: string) {
  const workers = sim.workersProblem === undefined;
  const stacks = workers && pySpy !== undefined;
  return {
    endpoints: [
      ...(sim.urls.proxy ? [{ name: 'proxy', url: sim.urls.proxy }] : []),
      { name: 'router', url: sim.urls.router },
    ],
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
            ...(stacks ? { stacks: { enabled: true, pySpy, timeout: '5s' } } : {}),
          },
        }
      : {}),
  };
}

/** With py-spy the stacks are the workers' own; without it, the simulated dump stands in. */
const dumpsItself = (sim: Sim, pySpy?: string) => sim.workersProblem === undefined && pySpy !== undefined;

/** A drain of one deployment's router from the gateway, for real (the demo shows it happen). */
const drainFrom = (gateway: string, sim: Sim) => ({
  url: gateway,
  worker: sim.urls.router,
  workerType: 'regular',
  dryRun: false,
});

/** The thread dump of one deployment's prefill, taken when its target goes wedged. */
const captureCommand = (name: string, sim: Sim, nodePath: string) => ({
  name,
  argv: [nodePath, '-e', DUMP_SCRIPT, '${PID}', `${sim.urls.control}/services/prefill/dump`],
  pidFile: sim.pidFiles.prefill,
  timeout: '5s',
});

export function demoConfig(
  sim: Sim,
  opts: {
    stateDir: string;
    listenAddress: string;
    nodePath: string;
    traffic?: DemoTraffic;
    /** py-spy's path when it is installed: the stacks come from the PD workers themselves (issue 42). */
    pySpy?: string;
  },
): string {
  const t = opts.traffic;
  const config = {
    web: { listenAddress: opts.listenAddress },
    stateDir: opts.stateDir,
    targets: [
      {
        name: DEMO_TARGET,
        ...watched(sim, opts.pySpy),
        remediate: {
          command: [opts.nodePath, '-e', RESTART_SCRIPT, `${sim.urls.control}/services/prefill/restart`],
          dryRun: false,
          after: '5s',
          cooldown: '30s',
          maxPerHour: 10,
          timeout: '10s',
        },
        ...(t !== undefined ? { drain: drainFrom(t.gateway, sim) } : {}),
      },
      ...(t !== undefined
        ? [{ name: DEMO_PEER_TARGET, ...watched(t.peer), drain: drainFrom(t.gateway, t.peer) }]
        : []),
    ],
    // Both deployments serve the same users through the gateway: the last one in rotation is never drained.
    ...(t !== undefined
      ? { pools: [{ name: DEMO_POOL, members: [{ target: DEMO_TARGET }, { target: DEMO_PEER_TARGET }] }] }
      : {}),
    incidents: {
      on: ['wedged'],
      captureTimeout: '10s',
      commands: [
        ...(dumpsItself(sim, opts.pySpy)
          ? []
          : [
              {
                ...captureCommand('prefill-threads', sim, opts.nodePath),
                ...(t !== undefined ? { targets: [DEMO_TARGET] } : {}),
              },
            ]),
        ...(t !== undefined
          ? [
              {
                ...captureCommand('peer-prefill-threads', t.peer, opts.nodePath),
                targets: [DEMO_PEER_TARGET],
              },
            ]
          : []),
      ],
    },
  };
  return `# Written by \`wedgewatch demo\`: the daemon watching the simulated SGLang PD deployment${t !== undefined ? 's behind the model gateway' : ''}.\n${stringify(config)}`;
}
