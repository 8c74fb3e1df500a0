// Headless Debian Chromium (the distribution's `chromium` package): the real browser the status page is
// checked in.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM = '/usr/bin/chromium';

export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium; .ci/run does it)`,
    );
  }
}

/** Runs headless chromium once on a 127.0.0.1 URL with a fresh profile; resolves with its stdout. */
export function chromium(args: string[], url: string, timeoutMs = 60_000): Promise<string> {
  requireChromium();
  const profile = mkdtempSync(join(tmpdir(), 'ww-chromium-'));
  const flags = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    `--user-data-dir=${profile}`,
    ...args,
    url,
  ];
  return new Promise((resolve, reject) => {
    execFile(
      CHROMIUM,
      flags,
      { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        rmSync(profile, { recursive: true, force: true });
        if (err) reject(new Error(`chromium failed: ${err.message}\n${stderr.slice(-2000)}`));
        else resolve(stdout);
      },
    );
  });
}
