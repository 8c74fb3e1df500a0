// Reads, expands and validates a config file. Every problem is reported with the exact path of the field,
// and all problems at once, so one `wedgewatch check` run is enough to fix a file.
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';
import { ConfigError, formatPath } from './errors.js';
import { ruleProblems } from './rule-problems.js';
import { Redactor } from '../lib/redact.js';
import {
  describeReadError,
  MAX_CA_FILE_BYTES,
  MAX_CONFIG_FILE_BYTES,
  MAX_TOKEN_FILE_BYTES,
  readSmallFile,
  SmallFileError,
  MAX_WATCHED_BYTES,
} from '../lib/small-file.js';
import {
  CAPTURE_PLACEHOLDERS,
  configSchema,
  PROBE_STRAY_KEY,
  probeFieldKinds,
  type Config,
} from './schema.js';

// Re-exported: callers that only catch a ConfigError import it from ./errors.js, which does not load zod or yaml.
export { ConfigError, formatPath };

export interface LoadedConfig {
  config: Config;
  /** Secret values (tokens, secret header values) to redact from every output. */
  secrets: string[];
  /** Resolved request headers per target and endpoint name, secrets included. */
  headers: Map<string, Map<string, Record<string, string>>>;
  path: string;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = formatPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    // A probe kind's schema says its kind (config/schema.ts kindObject): a field of another kind says so.
    const kind = issue.message.startsWith(PROBE_STRAY_KEY) ? issue.message.slice(PROBE_STRAY_KEY.length) : '';
    return issue.keys
      .map((k) => {
        const owners = kind === '' ? [] : probeFieldKinds(k);
        const what =
          owners.length === 0
            ? 'unknown key'
            : `not a field of a ${kind} probe (only ${owners.join(' and ')} probes have it)`;
        return `${formatPath([...issue.path, k])}: ${what}`;
      })
      .join('\n');
  }
  if (issue.code === 'invalid_type' && issue.input === undefined) {
    return `${where}: required (expected ${issue.expected})`;
  }
  return `${where}: ${issue.message}`;
}

const isCaptureArgv = (p: (string | number)[]) =>
  p.length === 5 && p[0] === 'incidents' && p[1] === 'commands' && p[3] === 'argv';

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$\$/g;

/** Replaces ${VAR} in every string of the parsed YAML; `$$` is a literal `$`. */
function expandEnv(
  value: unknown,
  path: (string | number)[],
  env: NodeJS.ProcessEnv,
  problems: string[],
  secrets: Set<string>,
): unknown {
  if (typeof value === 'string') {
    return value.replace(ENV_REF, (whole, name: string | undefined) => {
      if (name === undefined) return '$';
      // A capture command's ${PID} is filled at capture time from a pid file, not from the environment.
      if (isCaptureArgv(path) && (CAPTURE_PLACEHOLDERS as readonly string[]).includes(name)) return whole;
      const v = env[name];
      if (v === undefined) {
        problems.push(`${formatPath(path)}: environment variable ${name} is not set`);
        return whole;
      }
      // Values from the environment are how secrets reach the config: treat them all as secret.
      if (v.length >= 4) secrets.add(v);
      return v;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => expandEnv(v, [...path, i], env, problems, secrets));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = expandEnv(v, [...path, k], env, problems, secrets);
    return out;
  }
  return value;
}

const SECRET_HEADER = /^(authorization|proxy-authorization|x-api-key|api-key|cookie)$/i;

export function parseConfigText(
  text: string,
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): LoadedConfig {
  const problems: string[] = [];
  const doc = YAML.parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      file,
      doc.errors.map((e) => `YAML: ${e.message.split('\n')[0]}`),
    );
  }
  let raw: unknown;
  try {
    raw = doc.toJS();
  } catch (err) {
    // e.g. "Excessive alias count": a YAML alias bomb is bad input like any other.
    throw new ConfigError(file, [`YAML: ${(err as Error).message}`]);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError(file, ['(top level): expected a mapping with at least `targets:`']);
  }
  const secrets = new Set<string>();
  const expanded = expandEnv(raw, [], env, problems, secrets);
  const parsed = configSchema.safeParse(expanded);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(...describeIssue(issue).split('\n'));
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(file, scrubbed(problems, secrets));
  const config = parsed.data;

  const base = dirname(resolve(file));
  const headers = new Map<string, Map<string, Record<string, string>>>();
  config.targets.forEach((t, i) => {
    const perEndpoint = new Map<string, Record<string, string>>();
    t.endpoints.forEach((e, j) => {
      const h: Record<string, string> = { ...e.headers };
      for (const [k, v] of Object.entries(h)) if (SECRET_HEADER.test(k) && v.length >= 4) secrets.add(v);
      let token = e.bearerToken;
      if (e.bearerTokenFile !== undefined) {
        const where = `${formatPath(['targets', i, 'endpoints', j, 'bearerTokenFile'])}`;
        if (token !== undefined) problems.push(`${where}: give bearerToken or bearerTokenFile, not both`);
        try {
          token = readSmallFile(resolve(base, e.bearerTokenFile), MAX_TOKEN_FILE_BYTES)
            .toString('utf8')
            .trim();
          if (token === '') problems.push(`${where}: file ${e.bearerTokenFile} is empty`);
        } catch (err) {
          problems.push(fileProblem(where, e.bearerTokenFile, err));
        }
      }
      if (token !== undefined && token !== '') {
        h.Authorization = `Bearer ${token}`;
        secrets.add(token);
      }
      const caFile = e.tls.caFile;
      if (caFile !== undefined) {
        try {
          readSmallFile(resolve(base, caFile), MAX_CA_FILE_BYTES);
        } catch (err) {
          problems.push(
            fileProblem(formatPath(['targets', i, 'endpoints', j, 'tls', 'caFile']), caFile, err),
          );
        }
      }
      perEndpoint.set(e.name, h);
    });
    headers.set(t.name, perEndpoint);
    // A watched path that is not a regular file hangs a reader (/dev/zero never ends, a FIFO blocks on open);
    // a missing one is fine (it is reported when it appears).
    t.watch.forEach((w, j) => {
      const where = formatPath(['targets', i, 'watch', j]);
      let st;
      try {
        st = statSync(resolve(base, w));
      } catch {
        return;
      }
      if (!st.isFile()) problems.push(`${where}: ${w} is not a regular file`);
      else if (st.size > MAX_WATCHED_BYTES)
        problems.push(`${where}: ${w} is ${st.size} bytes; watched files are capped at ${MAX_WATCHED_BYTES}`);
    });
  });
  // Invalid patterns, and patterns that could backtrack without bound (src/lib/regex.ts), fail `check`.
  for (const [i, r] of config.rules.entries()) {
    for (const p of ruleProblems(r)) problems.push(`rules[${i}].${p}`);
  }
  if (problems.length > 0) throw new ConfigError(file, scrubbed(problems, secrets));
  return { config, secrets: [...secrets], headers, path: file };
}

/** "…: cannot read x: ENOENT", "…: x is not a regular file (a FIFO)", "…: x is 9000000 bytes; at most …". */
function fileProblem(where: string, file: string, err: unknown): string {
  return err instanceof SmallFileError
    ? `${where}: ${file} ${err.message}`
    : `${where}: cannot read ${file}: ${describeReadError(err)}`;
}

/** A ${VAR} value in the wrong field is quoted by its problem ("got …"): mask this file's secrets there. */
function scrubbed(problems: string[], secrets: Iterable<string>): string[] {
  const r = new Redactor();
  r.set(secrets);
  return problems.map((p) => r.redact(p));
}

export function loadConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  let text: string;
  try {
    // The config path too may be a FIFO (`check --config <(…)`) or a device: refused as the credential files are.
    text = readSmallFile(file, MAX_CONFIG_FILE_BYTES).toString('utf8');
  } catch (err) {
    throw new ConfigError(file, [
      err instanceof SmallFileError
        ? `config file ${err.message}`
        : `cannot read config file: ${describeReadError(err)}`,
    ]);
  }
  return parseConfigText(text, file, env);
}
