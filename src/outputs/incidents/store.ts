// The bundles on disk: listing, reading one, and retention (by count and total bytes, oldest removed first).
// Shared by the daemon's API, the CLI and the capture itself; a directory without manifest.json is a capture
// that never finished and is not listed.
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { INCIDENT_ID } from './bundle.js';
import type { IncidentManifest } from './manifest.js';

export const INCIDENTS_DIR = 'incidents';

export interface IncidentSummary {
  id: string;
  target: string;
  state: string;
  diagnosis: string | null;
  result: string;
  captureStart: number;
  captureEnd: number;
  bytes: number;
  files: number;
}

export interface IncidentFile {
  path: string;
  bytes: number;
}

export const incidentsDir = (stateDir: string) => join(stateDir, INCIDENTS_DIR);

async function walk(dir: string, prefix = ''): Promise<IncidentFile[]> {
  const out: IncidentFile[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const rel = prefix === '' ? e.name : `${prefix}/${e.name}`;
    if (e.isDirectory()) out.push(...(await walk(join(dir, e.name), rel)));
    else if (e.isFile() && !e.name.startsWith('.')) {
      out.push({ path: rel, bytes: (await stat(join(dir, e.name))).size });
    }
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

/** Bundle ids under `dir`, oldest first (ids begin with their time). */
async function ids(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries
      .filter((e) => e.isDirectory() && INCIDENT_ID.test(e.name))
      .map((e) => e.name)
      .sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

export async function readManifest(dir: string, id: string): Promise<IncidentManifest | undefined> {
  if (!INCIDENT_ID.test(id)) return undefined;
  try {
    return JSON.parse(await readFile(join(dir, id, 'manifest.json'), 'utf8')) as IncidentManifest;
  } catch {
    return undefined;
  }
}

export async function bundleFiles(dir: string, id: string): Promise<IncidentFile[]> {
  if (!INCIDENT_ID.test(id)) return [];
  return walk(join(dir, id));
}

/** Finished bundles, newest first. */
export async function listIncidents(dir: string, q: { target?: string } = {}): Promise<IncidentSummary[]> {
  const out: IncidentSummary[] = [];
  for (const id of (await ids(dir)).reverse()) {
    const m = await readManifest(dir, id);
    if (m === undefined || (q.target !== undefined && m.target !== q.target)) continue;
    const files = await bundleFiles(dir, id).catch(() => []);
    out.push({
      id,
      target: m.target,
      state: m.state,
      diagnosis: m.diagnosis,
      result: m.result,
      captureStart: m.times.captureStart,
      captureEnd: m.times.captureEnd,
      bytes: files.reduce((n, f) => n + f.bytes, 0),
      files: files.length,
    });
  }
  return out;
}

async function dirBytes(path: string): Promise<number> {
  try {
    return (await walk(path)).reduce((n, f) => n + f.bytes, 0);
  } catch {
    return 0;
  }
}

/**
 * Removes the oldest bundles until at most `count` remain and they total at most `bytes`; the newest bundle is
 * always kept (the one just captured is the evidence asked for). Unfinished directories count and go too.
 */
export async function enforceRetention(
  dir: string,
  limits: { count: number; bytes: number },
): Promise<string[]> {
  const all = await ids(dir);
  const sizes = await Promise.all(all.map((id) => dirBytes(join(dir, id))));
  let total = sizes.reduce((a, b) => a + b, 0);
  const removed: string[] = [];
  for (let i = 0; i < all.length - 1; i++) {
    if (all.length - removed.length <= limits.count && total <= limits.bytes) break;
    await rm(join(dir, all[i]!), { recursive: true, force: true });
    total -= sizes[i]!;
    removed.push(all[i]!);
  }
  return removed;
}
