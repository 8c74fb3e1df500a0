// The remediation `action` label, shared by the remediator (which exports it with every run) and the series
// pre-created at start (known-series.ts), so both name the same series.
import { basename } from 'node:path';

/** The remediation `action` label: the command's base name, as the remediator exports it. */
export function remediationAction(command: readonly string[]): string {
  return basename(command[0] ?? '')
    .replace(/[^A-Za-z0-9_.:-]/g, '_')
    .slice(0, 100);
}
