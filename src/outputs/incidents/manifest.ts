// manifest.json: what a bundle is about and what it holds. Times are Unix ms (with ISO copies for people).
import type { WindowMark } from './log-window.js';

export const MANIFEST_FORMAT = 1;

export type PieceStatus = 'ok' | 'timeout' | 'error' | 'skipped';

export interface PieceRecord {
  /** logs, engine, status, probes, changes, events, command */
  kind: string;
  name: string;
  status: PieceStatus;
  /** Files in the bundle this piece wrote. */
  files: string[];
  detail?: string;
  durationMs: number;
}

export interface LogWindowRecord {
  service: string;
  /** The file on the watched host. */
  source: string;
  /** The window's file in the bundle. */
  path: string;
  startOffset: number;
  endOffset: number;
  droppedBytes: number;
  marks: WindowMark[];
}

export interface CommandRecord {
  name: string;
  argv: string[];
  pid?: number;
  result: 'success' | 'failure' | 'timeout' | 'skipped';
  code?: number | null;
  durationMs: number;
  path?: string;
  detail?: string;
}

export interface IncidentManifest {
  format: number;
  id: string;
  target: string;
  state: string;
  diagnosis: string | null;
  cause: string;
  /** captured: every piece finished; partial: some timed out or failed (see pieces). */
  result: 'captured' | 'partial';
  times: {
    /** The earliest signal of this episode (critical line, failing probe, stall, first non-ok transition). */
    firstSignal: number;
    /** When the detector entered the captured state. */
    confirmation: number;
    lastOk?: number;
    captureStart: number;
    captureEnd: number;
    /** captureStart + captureTimeout: remediation ran no later than this. */
    deadline: number;
  };
  timesIso: Record<string, string>;
  window: { ms: number; from: number; to: number };
  /** What the detector used: critical lines, failing probes, stalled engines, and the journal since ok. */
  evidence: {
    critical: unknown[];
    confirmedCritical?: unknown;
    failingProbes: unknown[];
    stalledEngines: unknown[];
    events: unknown[];
  };
  versions: { wedgewatch: string; node: string; platform: string; engines: Record<string, string> };
  logs: LogWindowRecord[];
  commands: CommandRecord[];
  pieces: PieceRecord[];
}
