// A config file's problems, each with the path of its field. Its own module, free of zod and yaml: `run` catches
// it without loading the schema (the config is validated in a child process, src/config/load-in-child.ts).

export class ConfigError extends Error {
  constructor(
    readonly path: string,
    readonly problems: string[],
  ) {
    super(`${path}: invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** `targets[0].probes[1].timeout` from zod's ['targets', 0, 'probes', 1, 'timeout']. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out === '' ? '(top level)' : out;
}
