import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { routePlugins } from '../../src/outputs/server/plugins.js';
import { capturingLogger } from '../helpers/logger.js';
import { tempDir } from './helpers.js';

const dir = tempDir('ww-remed-');
let daemon: Daemon | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
});

async function start(lifecycle: boolean) {
  const file = join(dir, `cfg-${lifecycle}.yaml`);
  writeFileSync(
    file,
    `web: { listenAddress: "127.0.0.1:0", enableLifecycle: ${lifecycle} }
stateDir: ${dir}/state-${lifecycle}
targets:
  - name: pd
    endpoints: [{ name: router, url: "http://127.0.0.1:9" }]
    remediate: { command: ["true"], dryRun: true }
  - name: other
    endpoints: [{ name: router, url: "http://127.0.0.1:9" }]
`,
  );
  const { logger, lines } = capturingLogger();
  daemon = new Daemon({ configPath: file, logger, plugins: routePlugins });
  await daemon.start();
  const base = `http://${daemon.address()}`;
  const call = async (method: 'GET' | 'POST', path: string) => {
    const res = await request(`${base}${path}`, { method });
    return { status: res.statusCode, type: String(res.headers['content-type']), body: await res.body.text() };
  };
  return { call, lines };
}

describe('remediation pause/resume', () => {
  it('pauses and resumes one target: shown in /api/status, on the page, in the metric and the log', async () => {
    const { call, lines } = await start(true);
    const paused = await call('POST', '/api/targets/pd/remediation/pause');
    expect(paused.status).toBe(200);
    expect(JSON.parse(paused.body)).toEqual({ target: 'pd', remediationPaused: true });
    const status = JSON.parse((await call('GET', '/api/status')).body) as {
      targets: Array<{ target: string; remediation: { paused: boolean } }>;
    };
    expect(Object.fromEntries(status.targets.map((t) => [t.target, t.remediation.paused]))).toEqual({
      pd: true,
      other: false,
    });
    const page = (await call('GET', '/')).body;
    const cards = page.replace(/\s+/g, ' ').split('<section class="card"').slice(1);
    expect(cards.find((c) => c.includes('data-target="pd"'))).toContain(
      '<span class="paused">remediation paused</span>',
    );
    expect(cards.find((c) => c.includes('data-target="other"'))).not.toContain('<span class="paused">');
    // The operator's action is in the target's recent events too.
    expect(cards.find((c) => c.includes('data-target="pd"'))).toContain('remediation paused by an operator');
    expect((await call('GET', '/metrics')).body).toMatch(/^wedgewatch_remediation_paused\{target="pd"\} 1$/m);
    expect(lines.some((l) => l.includes('remediation paused by an operator'))).toBe(true);

    expect(JSON.parse((await call('POST', '/api/targets/pd/remediation/resume')).body)).toEqual({
      target: 'pd',
      remediationPaused: false,
    });
    expect((await call('GET', '/metrics')).body).toMatch(/^wedgewatch_remediation_paused\{target="pd"\} 0$/m);
    expect((await call('GET', '/')).body).not.toContain('<span class="paused">');
  });

  it('answers 404 for an unknown target, and for every write endpoint without lifecycle', async () => {
    const on = await start(true);
    const unknown = await on.call('POST', '/api/targets/%3Cscript%3E/remediation/pause');
    expect(unknown.status).toBe(404);
    // Echoed only as JSON, which a browser does not render as HTML.
    expect(unknown.type).toMatch(/^application\/json/);
    expect(JSON.parse(unknown.body)).toEqual({
      error: 'unknown target "<script>"',
      targets: ['pd', 'other'],
    });
    await daemon!.stop();
    daemon = undefined;
    const off = await start(false);
    for (const path of [
      '/api/targets/pd/remediation/pause',
      '/api/targets/pd/remediation/resume',
      '/-/reload',
    ]) {
      expect((await off.call('POST', path)).status, path).toBe(404);
    }
    expect((await off.call('GET', '/metrics')).body).toMatch(
      /^wedgewatch_remediation_paused\{target="pd"\} 0$/m,
    );
  });
});
