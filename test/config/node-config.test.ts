// The `node:` block (issue 42) is strict and says what is wrong with its path: `check` reports these as it does the
// rest of the config.
import { describe, expect, it } from 'vitest';
import { parseConfigText, ConfigError } from '../../src/config/load.js';

const base = (node: string) => `
targets:
  - name: pd
    endpoints: [{ name: router, url: 'http://127.0.0.1:30000' }]
    node:
${node}
`;

function problems(node: string): string[] {
  try {
    parseConfigText(base(node), '/tmp/wedgewatch.yaml', {});
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('node config', () => {
  it('a full block loads with its defaults', () => {
    const cfg = parseConfigText(
      base(`      processes:
        - { service: prefill, pidFile: /run/sglang/prefill.pid }
        - { service: decode, systemdUnit: sglang-decode.service }
        - { service: router, port: 30000 }
      stacks: { enabled: true }
      gpus: { dcgm: 'http://127.0.0.1:9400/metrics' }
      nccl: {}`),
      '/tmp/wedgewatch.yaml',
      {},
    ).config;
    const node = cfg.targets[0]!.node!;
    expect(node.every).toBe(5000);
    expect(node.stacks).toMatchObject({ enabled: true, pySpy: 'py-spy', native: false, timeout: 5000 });
    expect(node.gpus).toMatchObject({ every: 10_000, timeout: 3000 });
    expect(node.nccl).toMatchObject({ ras: '127.0.0.1:28028', every: 15_000, timeout: 10_000 });
    expect(node.processes.map((p) => p.python)).toEqual(['auto', 'auto', 'auto']);
  });

  it('each mistake is named with its path', () => {
    const got = problems(`      processes:
        - { service: prefill }
        - { service: decode, pidFile: /x.pid, port: 30001 }
        - { service: a, systemdUnit: sglang }
        - { service: b, container: 'not-hex' }
        - { service: c, cgroup: '../../etc' }
        - { service: a, pidFile: /y.pid }
        - { service: d, pidFile: /z.pid, pidfile: /z.pid }
      gpus: {}
      nccl: { ras: '10.0.0.5:28028' }`);
    const at = 'targets[0].node.';
    expect(got.sort()).toEqual(
      [
        `${at}processes[0]: say where the processes are: one of pidFile, systemdUnit, port, cgroup, container`,
        `${at}processes[1]: give one of pidFile, systemdUnit, port, cgroup, container, not pidFile and port`,
        `${at}processes[2].systemdUnit: expected a systemd unit name like "sglang-prefill.service"`,
        `${at}processes[3].container: expected a container id (12 to 64 hex digits)`,
        `${at}processes[4].cgroup: must not contain ".."`,
        `${at}processes[5].service: service "a" is already found by processes[2]`,
        `${at}processes[6].pidfile: unknown key`,
        `${at}gpus: say where GPU readings come from: dcgm, nvidiaSmi, or both`,
        `${at}nccl.ras: expected a loopback host:port like "127.0.0.1:28028"`,
      ].sort(),
    );
  });

  it('stacks with no process to dump is an error', () => {
    expect(problems('      stacks: { enabled: true }').join('\n')).toMatch(
      /stacks\.enabled: stacks need processes to dump/,
    );
  });
});
