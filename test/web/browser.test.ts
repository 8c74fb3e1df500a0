// The status page in a real browser (Debian chromium, headless) while the simulator is wedged: the card says
// wedged with its diagnosis, and a hostile log line shows as text and runs nothing.
import { appendFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { escapeHtml } from '../../src/outputs/server/html.js';
import { routePlugins } from '../../src/outputs/server/plugins.js';
import { startSim, type Sim } from '../../src/sim/index.js';
import { tripBootstrapThreadDeath } from '../helpers/sim.js';
import { waitFor } from '../helpers/wait.js';
import { chromium, requireChromium } from './chromium.js';
import { capturingLogger } from '../helpers/logger.js';
import { tempDir } from './helpers.js';

const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts');
const HOSTILE = `<script>alert(1)</script><script>document.title='pwned'</script><img src=x onerror="document.title='pwned'">`;

interface Status {
  targets: Array<{
    target: string;
    state: string;
    diagnosis: string | null;
    recentEvents: Array<{ summary: string }>;
  }>;
}

let sim: Sim | undefined;
let daemon: Daemon | undefined;
let base = '';

async function status(): Promise<Status['targets'][number]> {
  const res = await request(`${base}/api/status`);
  const body = (await res.body.json()) as Status;
  return body.targets.find((t) => t.target === 'sim-pd')!;
}

beforeAll(async () => {
  requireChromium();
  const dir = tempDir('ww-browser-');
  sim = await startSim({ faults: ['nixl_abort_unhandled'] });
  await tripBootstrapThreadDeath(sim);
  const file = join(dir, 'cfg.yaml');
  writeFileSync(
    file,
    `web: { listenAddress: "127.0.0.1:0" }
stateDir: ${dir}/state
targets:
  - name: sim-pd
    endpoints: [{ name: router, url: "${sim.urls.router}" }]
    probes:
      - { name: chat, kind: chat, every: 1s, jitter: 0, timeout: 2s, conn: [fresh, keepalive] }
      - { name: health, kind: health, every: 1s, jitter: 0, timeout: 2s, path: /health }
    logs:
      - { service: prefill, path: "${sim.logFiles.prefill}", packs: [sglang, nixl, python], from: start }
rules:
  - { name: user_alert, severity: critical, match: "alert\\\\(1\\\\)" }
`,
  );
  const { logger } = capturingLogger();
  daemon = new Daemon({ configPath: file, logger, plugins: routePlugins });
  await daemon.start();
  base = `http://${daemon.address()}`;
  await waitFor(async () => (await status()).state === 'wedged', {
    timeoutMs: 30_000,
    intervalMs: 200,
    what: 'the target to be wedged',
  });
});

afterAll(async () => {
  await daemon?.stop();
  await sim?.stop();
});

describe('status page in chromium', () => {
  it('shows the wedged target with its diagnosis', async () => {
    const st = await status();
    expect(st.diagnosis).toBeTruthy();
    const dom = await chromium(['--dump-dom'], `${base}/`);
    const card = /<section class="card"[^>]*data-target="sim-pd"[^>]*>[\s\S]*?<\/section>/.exec(dom)?.[0];
    expect(card, dom.slice(0, 2000)).toBeDefined();
    expect(card).toContain('data-state="wedged"');
    expect(card).toMatch(/<span class="state"[^>]*>wedged<\/span>/);
    expect(card).toContain(`diagnosis: <code>${escapeHtml(st.diagnosis!)}</code>`);
    expect(card).toContain('<th>keepalive</th>');
    expect(card).toContain(
      'href="/probe?target=sim-pd&amp;probe=chat&amp;endpoint=router&amp;conn=fresh&amp;debug=true"',
    );
  });

  it('shows a hostile log line as text and runs nothing; keeps a screenshot', async () => {
    appendFileSync(sim!.logFiles.prefill, `[2026-01-02 03:04:05 TP0] user said ${HOSTILE}\n`);
    await waitFor(async () => (await status()).recentEvents.some((e) => e.summary.includes('alert(1)')), {
      timeoutMs: 20_000,
      intervalMs: 200,
      what: 'the hostile line to become an event',
    });
    const dom = await chromium(['--dump-dom'], `${base}/`);
    // The text is there, escaped; no element it tried to inject exists; its script did not run.
    expect(dom).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(dom).not.toMatch(/<script/i);
    expect(dom).not.toMatch(/<img/i);
    expect(dom).toContain('<title>wedgewatch status</title>');
    expect(dom).not.toContain('<title>pwned</title>');

    mkdirSync(ARTIFACTS, { recursive: true });
    const shot = join(ARTIFACTS, 'status-page.png');
    await chromium([`--screenshot=${shot}`, '--window-size=1280,1600', '--hide-scrollbars'], `${base}/`);
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    expect(readFileSync(shot).subarray(0, 8)).toEqual(
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    );
  });
});
