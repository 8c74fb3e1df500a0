// More than one node: every daemon probes its own engines; a hop marked `shared` (the router every node
// reaches) is probed only where `probeShared` is on, so 16 daemons do not probe it 16 times.
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/load.js';

const CONFIG = `
probeShared: \${WEDGEWATCH_PROBE_SHARED}
targets:
  - name: pd
    endpoints:
      - { name: router, url: "http://router.llm.svc:30001", shared: true }
      - { name: prefill, url: "http://127.0.0.1:30000" }
    probes:
      - { name: chat, kind: chat, every: 15s, endpoints: [router] }
      - { name: health, kind: health, every: 10s }
`;

const probes = (env: Record<string, string>) =>
  parseConfigText(CONFIG, 'x.yaml', env).config.targets[0]!.probes.map((p) => [p.name, p.endpoints ?? 'all']);

describe('probeShared', () => {
  it('on (the one daemon that probes the shared hop): every probe as configured', () => {
    expect(probes({ WEDGEWATCH_PROBE_SHARED: 'true' })).toEqual([
      ['chat', ['router']],
      ['health', 'all'],
    ]);
  });

  it('off (every other daemon): shared hops are left out, a probe of only shared hops is dropped', () => {
    expect(probes({ WEDGEWATCH_PROBE_SHARED: 'false' })).toEqual([['health', ['prefill']]]);
  });

  it('anything but true/false is an error naming the field', () => {
    expect(() => probes({ WEDGEWATCH_PROBE_SHARED: 'no' })).toThrow(/probeShared: expected true or false/);
  });
});
