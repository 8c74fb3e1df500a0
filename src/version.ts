import { readFileSync } from 'node:fs';

// Read from package.json at runtime so the version has a single source; dist/ and src/ sit at the same depth.
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export const VERSION: string = pkg.version;

export interface BuildInfo {
  branch: string;
  revision: string;
  buildUser: string;
  buildDate: string;
}

/** Written next to the compiled files by scripts/build-info.mjs; absent when running from src/ (tests). */
function readBuildInfo(): BuildInfo {
  const unknown: BuildInfo = {
    branch: 'unknown',
    revision: 'unknown',
    buildUser: 'unknown',
    buildDate: 'unknown',
  };
  try {
    const raw = JSON.parse(readFileSync(new URL('./build-info.json', import.meta.url), 'utf8')) as Partial<
      Record<keyof BuildInfo, unknown>
    >;
    const pick = (k: keyof BuildInfo) => (typeof raw[k] === 'string' && raw[k] !== '' ? raw[k] : unknown[k]);
    return {
      branch: pick('branch'),
      revision: pick('revision'),
      buildUser: pick('buildUser'),
      buildDate: pick('buildDate'),
    };
  } catch {
    return unknown;
  }
}

export const BUILD: BuildInfo = readBuildInfo();

/** `--version` in Prometheus's layout (common/version.Print), with the Node.js version where Go's would be. */
export function versionText(): string {
  return [
    `wedgewatch, version ${VERSION} (branch: ${BUILD.branch}, revision: ${BUILD.revision})`,
    `  build user:       ${BUILD.buildUser}`,
    `  build date:       ${BUILD.buildDate}`,
    `  node version:     ${process.version}`,
    `  platform:         ${process.platform}/${process.arch}`,
  ].join('\n');
}
