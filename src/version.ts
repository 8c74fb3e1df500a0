import { readFileSync } from 'node:fs';

// Read from package.json at runtime so the version has a single source; dist/ and src/ sit at the same depth.
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export const VERSION: string = pkg.version;
