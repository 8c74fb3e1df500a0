// Saved read positions, keyed by path and inode, so a restart resumes where the last run stopped and a
// file replaced while the daemon was down is recognised as new. Written atomically (temp file + rename):
// a crash mid-write leaves the previous state, never a torn file.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SavedOffset {
  ino: number;
  dev: number;
  offset: number;
}

interface StateFile {
  version: 1;
  files: Record<string, SavedOffset>;
}

export class OffsetStore {
  private files = new Map<string, SavedOffset>();
  private dirty = false;
  readonly file: string;

  constructor(stateDir: string, name: string) {
    this.file = join(stateDir, `log-offsets-${name}.json`);
  }

  /** Loads the saved state; a missing file is an empty state, a corrupt one is reported and ignored. */
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
      for (const [path, o] of Object.entries(parsed.files ?? {})) {
        if (Number.isSafeInteger(o.ino) && Number.isSafeInteger(o.offset) && o.offset >= 0) {
          this.files.set(path, { ino: o.ino, dev: o.dev, offset: o.offset });
        }
      }
      return {};
    } catch (err) {
      return { error: `ignoring corrupt ${this.file}: ${(err as Error).message}` };
    }
  }

  get(path: string): SavedOffset | undefined {
    return this.files.get(path);
  }

  /** The saved position of this inode under any path: a file renamed while the daemon was down. */
  findByInode(dev: number, ino: number): SavedOffset | undefined {
    for (const o of this.files.values()) if (o.ino === ino && o.dev === dev) return o;
    return undefined;
  }

  set(path: string, o: SavedOffset): void {
    const prev = this.files.get(path);
    if (prev && prev.ino === o.ino && prev.dev === o.dev && prev.offset === o.offset) return;
    this.files.set(path, o);
    this.dirty = true;
  }

  get isDirty(): boolean {
    return this.dirty;
  }

  save(): void {
    if (!this.dirty) return;
    const state: StateFile = { version: 1, files: Object.fromEntries(this.files) };
    mkdirSync(join(this.file, '..'), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(state));
    renameSync(tmp, this.file);
    this.dirty = false;
  }
}
