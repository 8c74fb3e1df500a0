/** Exit codes shared by every command (its own module: `replay` and `check` need these and no logger). */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;
