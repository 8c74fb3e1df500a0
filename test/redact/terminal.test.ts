// Raw terminal escapes from engine bodies and log lines reached /probe?debug=true and `replay`'s output
// (issue 24 #14): an OSC 52 there writes the reader's clipboard, OSC 0 retitles the window, CSI erases what
// was printed. They are shown as escapes now; the text around them is kept.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { probeRoutes } from '../../src/outputs/server/probe-routes.js';
import { bootstrapThreadTraceback } from '../../src/sim/logfmt.js';
import { visibleControls } from '../../src/lib/terminal-text.js';
import { runCli } from '../helpers/cli.js';
import { startServer, type TestServer } from '../probes/hostile.js';
import { capturingLogger } from '../helpers/logger.js';

const OSC52 = '\x1b]52;c;ZWNobyBvd25lZA==\x07';
const TITLE = '\x1b]0;owned\x07';
const CLEAR = '\x1b[2J\x1b[H';
const C1_CSI = '\u009b31m';
const HOSTILE = `${OSC52}${TITLE}${CLEAR}${C1_CSI}hidden\rshown\u202eevil`;
/** Nothing a terminal acts on: no C0 control but tab/newline, no DEL or C1, no lone CR, no bidi override. */
// eslint-disable-next-line no-control-regex -- looking for control characters is the point
const ACTIVE = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/;

const dir = mkdtempSync(join(tmpdir(), 'ww-terminal-'));
const servers: TestServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('terminal escapes', () => {
  it('are shown, not passed on; newlines, tabs and CRLF are kept', () => {
    const out = visibleControls(`a\tb\nc\r\nd ${HOSTILE}`);
    expect(out).not.toMatch(ACTIVE);
    expect(out).toContain('a\tb\nc\r\nd ');
    expect(out).toContain('\\x1b]52;c;ZWNobyBvd25lZA==\\x07');
    expect(out).toContain('\\x9b31m');
    expect(out).toContain('hidden\\x0dshown\\u202eevil');
  });

  it('from an engine body do not reach /probe?debug=true', async () => {
    const engine = await startServer((_req, res) => {
      res.statusCode = 500;
      res.setHeader('content-type', 'text/plain');
      res.end(`engine error ${HOSTILE}`);
    });
    servers.push(engine);
    const file = join(dir, 'cfg.yaml');
    writeFileSync(
      file,
      `stateDir: ${dir}/state
targets:
  - name: pd
    endpoints:
      - { name: router, url: "${engine.url}" }
    probes:
      - { name: info, kind: serverinfo, every: 1h, jitter: 0, timeout: 5s, path: /get_server_info }
      - { name: chat, kind: chat, every: 1h, jitter: 0, timeout: 5s }
`,
    );
    const { logger } = capturingLogger();
    const d = new Daemon({
      configPath: file,
      logger,
      listenAddress: '127.0.0.1:0',
      plugins: [(dd) => probeRoutes(dd)],
    });
    await d.start();
    try {
      for (const probe of ['info', 'chat']) {
        const body = await (
          await fetch(`http://${d.address()}/probe?target=pd&probe=${probe}&debug=true`)
        ).text();
        expect(body, probe).toContain('engine error \\x1b]52;c;');
        expect(body, probe).not.toMatch(ACTIVE);
      }
    } finally {
      await d.stop();
    }
  });

  it("from a log line do not reach replay's output", async () => {
    const lines = bootstrapThreadTraceback(1);
    lines[lines.length - 1] += ` ${HOSTILE}`;
    lines[0] += ` ${TITLE}`;
    const log = join(dir, 'prefill.log');
    writeFileSync(log, lines.join('\n') + '\n');
    const r = await runCli(['replay', '--pack', 'nixl', '--pack', 'python', log], { timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    // Not vacuous: the event and its quoted line are printed, with the escapes shown.
    expect(r.stdout).toMatch(/critical +nixl_/);
    expect(r.stdout).toContain('Foreign traffic? \\x1b]52;c;ZWNobyBvd25lZA==\\x07\\x1b]0;owned\\x07');
    expect(r.stdout).not.toMatch(ACTIVE);
  });
});
