// The agent-check port over a real socket on 127.0.0.1: a target with no verdict yet gets no line (HAProxy keeps the
// server as it was: a wedgewatch restart must not take every backend out), a verdict gets its line.
import { connect } from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { initialState } from '../../src/core/memory.js';
import type { TargetStateName } from '../../src/core/vocabulary.js';
import { AgentServer } from '../../src/outputs/traffic/agent.js';
import { TrafficView } from '../../src/outputs/traffic/view.js';

/** What the agent says to one check that sends `name\n`: the whole reply, '' for none. */
function check(port: number, name: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port }, () => s.write(`${name}\n`));
    let got = '';
    s.on('data', (b) => (got += b.toString('latin1')));
    s.on('end', () => resolve(got));
    s.on('error', reject);
  });
}

let agent: AgentServer | undefined;
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
});

describe('the agent-check port', () => {
  it('sends no line while the target has no verdict, then up or down as the verdict says', async () => {
    const view = new TrafficView({
      targets: [{ name: 'a', endpoints: ['router'], wedgeAfter: 2, downAfter: 2 }],
      readiness: { ready: ['ok', 'degraded'] },
      pools: [],
      now: () => 5_000,
    });
    const set = (state: TargetStateName) => {
      const m = initialState('a', 1_000);
      m.state = state;
      view.update(m);
    };
    set('unknown');
    agent = new AgentServer({
      config: {
        listenAddress: '127.0.0.1:0',
        timeout: 2000,
        maxConnections: 8,
        unready: 'down',
        servers: [{ name: 'srv-a', target: 'a' }],
      },
      listen: { host: '127.0.0.1', port: 0 },
      view: () => view,
      logger: pino({ level: 'silent' }),
    });
    await agent.start();
    const { port } = agent.address();
    expect(await check(port, 'srv-a')).toBe('');
    set('wedged');
    expect(await check(port, 'srv-a')).toMatch(/^down #wedged/);
    set('ok');
    expect(await check(port, 'srv-a')).toBe('up\n');
  });
});
