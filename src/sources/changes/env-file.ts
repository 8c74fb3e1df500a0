// Env files (systemd EnvironmentFile=, docker --env-file, .env): their values are often secrets, so a change is
// journaled as the keys that changed, never as a line diff; values under secret-looking keys feed the redactor.
import { basename } from 'node:path';

/** `.env`, `*.env`, `.env.*`, `env`, `environment`, and anything under /etc/default or /etc/sysconfig. */
export function isEnvFile(path: string): boolean {
  const base = basename(path);
  return (
    /^\.env(\..+)?$/.test(base) ||
    /\.env$/.test(base) ||
    base === 'env' ||
    base === 'environment' ||
    /^\/etc\/(default|sysconfig)\//.test(path)
  );
}

const ASSIGNMENT = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/;

/** KEY=VALUE lines (quotes stripped); comments and blank lines skipped. Other lines are counted apart. */
export function parseEnv(text: string): { vars: Map<string, string>; other: string[] } {
  const vars = new Map<string, string>();
  const other: string[] = [];
  for (const line of text.split('\n')) {
    if (/^\s*(#|$)/.test(line)) continue;
    const m = ASSIGNMENT.exec(line);
    if (!m) {
      other.push(line);
      continue;
    }
    let v = m[2]!.trim();
    if (v.length >= 2 && (v[0] === '"' || v[0] === "'") && v.endsWith(v[0])) v = v.slice(1, -1);
    vars.set(m[1]!, v);
  }
  return { vars, other };
}

/** Which keys were added, removed or changed, in the unified-diff header style; no value ever appears. */
export function envDiff(before: string, after: string, path: string): string {
  const a = parseEnv(before);
  const b = parseEnv(after);
  const lines: string[] = [];
  for (const [k, v] of b.vars) {
    if (!a.vars.has(k)) lines.push(`+ ${k} (added)`);
    else if (a.vars.get(k) !== v) lines.push(`~ ${k} (value changed)`);
  }
  for (const k of a.vars.keys()) if (!b.vars.has(k)) lines.push(`- ${k} (removed)`);
  const otherChanged = a.other.join('\n') !== b.other.join('\n');
  if (otherChanged) lines.push(`~ ${b.other.length} line(s) that are not KEY=VALUE changed`);
  if (lines.length === 0) lines.push('(only comments, blank lines or formatting changed)');
  return `--- a${path}\n+++ b${path}\n@@ env file: keys only, values are never shown @@\n${lines.join('\n')}\n`;
}

const SECRET_KEY = /(TOKEN|SECRET|PASSWORD|PASSWD|PASS|KEY|CREDENTIAL|AUTH|PRIVATE|COOKIE|SESSION)/i;

/** Values under keys that name a secret (HF_TOKEN, OPENAI_API_KEY, …): redacted wherever they appear. */
export function envSecrets(text: string): string[] {
  return [...parseEnv(text).vars].filter(([k, v]) => SECRET_KEY.test(k) && v.length >= 4).map(([, v]) => v);
}
