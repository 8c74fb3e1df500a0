// Writes dist/build-info.json after `tsc`: branch, revision, build user and date, as Prometheus's `--version` and
// build_info carry them (Go binaries get them from -ldflags; this is our equivalent). Outside a git checkout (a
// container build without .git) the fields are "unknown".
import { execFileSync } from 'node:child_process';
import { hostname, userInfo } from 'node:os';
import { fileURLToPath } from 'node:url';
import { writeIfChanged } from './write-if-changed.mjs';

const git = (...args) => {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
};
const pad = (n) => String(n).padStart(2, '0');
const d = new Date();
const info = {
  branch: process.env.WEDGEWATCH_BUILD_BRANCH ?? git('rev-parse', '--abbrev-ref', 'HEAD'),
  revision: process.env.WEDGEWATCH_BUILD_REVISION ?? git('rev-parse', 'HEAD'),
  buildUser: `${userInfo().username}@${hostname()}`,
  // Prometheus's layout: 20230201-07:53:32 (UTC).
  buildDate: `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}-${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`,
};
writeIfChanged(
  fileURLToPath(new URL('../dist/build-info.json', import.meta.url)),
  `${JSON.stringify(info, null, 2)}\n`,
);
