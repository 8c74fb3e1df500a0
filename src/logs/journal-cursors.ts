// The journal's equivalent of a file offset: the cursor of the last entry read, per journal source, saved in
// stateDir so a restart resumes just after it. Written atomically (temp file + rename), like the offsets.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

interface StateFile {
  version: 1;
  cursors: Record<string, string>;
}

export class CursorStore {
  private cursors = new Map<string, string>();
  private dirty = false;
  readonly file: string;

  constructor(stateDir: string, name: string) {
    this.file = join(stateDir, `journal-cursors-${name}.json`);
  }

  /** A missing file is an empty state; a corrupt one is reported and ignored (the source starts per `from`). */
  load(): { error?: string } {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return code === 'ENOENT' ? {} : { error: `cannot read ${this.file}: ${code ?? String(err)}` };
    }
    try {
      const parsed = JSON.parse(text) as StateFile;
      for (const [k, c] of Object.entries(parsed.cursors ?? {})) {
        if (typeof c === 'string' && c !== '') this.cursors.set(k, c);
      }
      return {};
    } catch (err) {
      return { error: `ignoring corrupt ${this.file}: ${(err as Error).message}` };
    }
  }

  get(key: string): string | undefined {
    return this.cursors.get(key);
  }

  set(key: string, cursor: string): void {
    if (this.cursors.get(key) === cursor) return;
    this.cursors.set(key, cursor);
    this.dirty = true;
  }

  save(): void {
    if (!this.dirty) return;
    mkdirSync(join(this.file, '..'), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ version: 1, cursors: Object.fromEntries(this.cursors) }));
    renameSync(tmp, this.file);
    this.dirty = false;
  }
}
