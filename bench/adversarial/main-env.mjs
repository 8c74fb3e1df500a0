// The shared setup of bench:adversarial: the simulator in process (its log files, control and abort events),
// one daemon (`pd` on the simulator with a real remediation and capture; `side` and `leak` on fake engines for
// the HTTP findings) and, when installed, a real Prometheus scraping it with the shipped rules.
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { DIST, Daemon, fakeEngine, freePort } from './harness.mjs';
import { startPrometheus } from './prometheus.mjs';

const { startSim } = await import(join(DIST, 'sim/index.js'));
export { startSim };

/** A secret shaped like an API key (letters and digits, 20 characters): finding 10 looks for pieces of it. */
export const LEAK_SECRET = 'Zq7Kp2Lm9Xw4Rt6Yb3Nv';
/**
 * Each leak endpoint's 500 body is the secret repeated with a one-character gap (period 21), shifted by its
 * offset: wherever the daemon cuts its error snippet, some endpoint's cut leaves 12 to 19 of the secret's
 * characters at the end, whatever the snippet's length.
 */
export const LEAK_OFFSETS = [0, 2, 4, 6, 8, 10, 12, 14, 16, 18];

/** The remediation command: appends one line per run to `marker` (observable, harmless). */
export function remediateToMarker(marker) {
  return {
    command: ['/bin/sh', '-c', `echo "$WEDGEWATCH_TARGET $WEDGEWATCH_DIAGNOSIS" >> '${marker}'`],
    dryRun: false,
    after: '1s',
    cooldown: '1s',
    maxPerHour: 100,
    timeout: '5s',
  };
}

export function markerRuns(marker) {
  return existsSync(marker) ? readFileSync(marker, 'utf8').split('\n').filter(Boolean).length : 0;
}

/**
 * `extras: false`: only `pd` (no fake engines, no Prometheus): a row's own daemon and simulator, whose history no
 * earlier row touched (the shield rows: each one's loaded phase is a stall, and four within 5 min are, rightly,
 * `stalls_recurring` on a shared target).
 */
export async function startMainEnv(dir, { extras = true, name = 'main' } = {}) {
  const sim = await startSim({
    logDir: join(dir, 'sim-logs'),
    waitingTimeoutMs: 5000,
    bootstrapTimeoutMs: 5000,
  });
  const cleanup = [() => sim.stop()];
  try {
    // side: the HTTP findings' engine. /health 200; /get_server_info 500 with terminal escapes (finding 14).
    const side = extras
      ? await fakeEngine((req, res, _body, path) => {
          if (path === '/health') return res.end('ok');
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(
            `engine error \x1b]0;pwned-title\x07 \x1b]52;c;ZWNobyBwd25lZA==\x07 \x1b[2J\x1b[31mred\x1b[0m end`,
          );
        })
      : undefined;
    if (side) cleanup.push(() => side.close());
    // leak: each endpoint answers 500 with the secret at its own offset (finding 10).
    const leaks = [];
    for (const off of extras ? LEAK_OFFSETS : []) {
      const body = `${'x'.repeat(off)}${`${LEAK_SECRET}.`.repeat(40)}`;
      const e = await fakeEngine((req, res) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(body);
      });
      leaks.push(e);
      cleanup.push(() => e.close());
    }
    const tokenFile = join(dir, 'leak.token');
    writeFileSync(tokenFile, `${LEAK_SECRET}\n`);
    const marker = join(dir, 'remediations.txt');
    const port = await freePort();
    const stateDir = join(dir, 'state');
    mkdirSync(stateDir, { recursive: true });
    const config = {
      web: { listenAddress: `127.0.0.1:${port}`, enableLifecycle: true },
      stateDir,
      incidents: { on: ['wedged'], captureTimeout: '10s', fetchTimeout: '2s' },
      targets: [
        {
          name: 'pd',
          model: 'sim-model',
          endpoints: [{ name: 'router', url: sim.urls.router }],
          probes: [
            { name: 'chat', kind: 'chat', every: '2s', jitter: 0, timeout: '15s', conn: ['fresh'] },
            { name: 'health', kind: 'health', every: '2s', timeout: '2s', path: '/health' },
          ],
          logs: [
            { service: 'prefill', path: sim.logFiles.prefill, from: 'end' },
            { service: 'decode', path: sim.logFiles.decode, from: 'end' },
            { service: 'router', path: sim.logFiles.router, from: 'end', packs: ['sglang'] },
          ],
          engines: [
            { service: 'decode', metrics: `${sim.urls.decode}/metrics`, every: '2s' },
            { service: 'prefill', metrics: `${sim.urls.prefill}/metrics`, every: '2s' },
          ],
          detect: { wedgeAfter: 2, recoverAfter: 1, confirmInterval: '1s', confirmAfter: '3s' },
          remediate: remediateToMarker(marker),
        },
        ...(extras
          ? [
              {
                name: 'side',
                model: 'm',
                endpoints: [{ name: 'fake', url: side?.url }],
                probes: [
                  { name: 'health', kind: 'health', every: '1m', timeout: '2s', path: '/health' },
                  { name: 'info', kind: 'serverinfo', every: '1m', timeout: '2s', path: '/get_server_info' },
                  { name: 'esc', kind: 'serverinfo', every: '1m', timeout: '2s', path: '/get_server_info' },
                ],
              },
              {
                name: 'leak',
                model: 'm',
                endpoints: leaks.map((e, i) => ({
                  name: `leak${i}`,
                  url: e.url,
                  bearerTokenFile: tokenFile,
                })),
                probes: [
                  { name: 'info', kind: 'serverinfo', every: '2s', timeout: '2s', path: '/get_server_info' },
                ],
              },
            ]
          : []),
      ],
    };
    const configPath = join(dir, 'wedgewatch.yaml');
    writeFileSync(configPath, stringify(config));
    const daemon = new Daemon(name, configPath, { port });
    cleanup.push(() => daemon.kill());
    await daemon.start();
    const prom = extras ? await startPrometheus(join(dir, 'prom'), `127.0.0.1:${port}`) : undefined;
    if (prom) cleanup.push(() => prom.stop());
    return {
      sim,
      side,
      leaks,
      daemon,
      prom,
      marker,
      stateDir,
      appendPrefill: (text) => appendFileSync(sim.logFiles.prefill, text),
      async stop() {
        for (const f of cleanup.reverse()) await Promise.resolve(f()).catch(() => undefined);
      },
    };
  } catch (err) {
    for (const f of cleanup.reverse()) await Promise.resolve(f()).catch(() => undefined);
    throw err;
  }
}
