/** Larger watched files are not read (a serve script or unit file is a few KB); `check` refuses such paths. */
export const MAX_WATCHED_BYTES = 16 * 1024 * 1024;
