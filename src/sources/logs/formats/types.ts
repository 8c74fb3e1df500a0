// What a line format (a container runtime's wrapper around each line the engine wrote) gives back.

/** One entry of a wrapped log file: the engine's text and what the runtime recorded about it. */
export interface WrappedEntry {
  /** The engine's bytes, without the file's line terminator (and without Docker's trailing `\n`). */
  text: Buffer;
  /** The runtime's timestamp text (RFC 3339, often with nanoseconds); parsed only when an event needs it. */
  time: string;
  /** `stdout` or `stderr`. */
  stream: string;
  /** More parts of this line follow (the runtime split a long line). */
  partial: boolean;
}

export interface LineFormat {
  readonly name: 'cri' | 'docker';
  /** Parses one line of the file (without its `\n`); null when the line is not in this format. */
  parse(raw: Buffer): WrappedEntry | null;
}
