import { watch, type FSWatcher } from 'node:fs';
import { basename } from 'node:path';

/** A running directory watch. */
export interface DirWatcher {
  close(): void;
}

export interface WatchOptions {
  /** Quiet time after the last change before `onChange` runs (editors write a file in several steps). */
  readonly debounceMs?: number;
  /** The watch itself failed (the directory was removed, too many watches). */
  readonly onError?: (err: Error) => void;
}

/** Editors' swap, backup and temporary files, and what never holds handler code. */
const IGNORED_NAME = /^(\.#|#.*#$)|~$|\.(sw[a-px]|tmp|bak|orig|crswap)$|___jb_(tmp|old)___$|^4913$|^\.DS_Store$/;
const IGNORED_PATH = /(^|[\\/])(node_modules|\.git)([\\/]|$)/;

/** True for a path (relative to the watched directory) whose change should not reload anything. */
export function ignoredChange(path: string): boolean {
  return IGNORED_PATH.test(path) || IGNORED_NAME.test(basename(path));
}

/**
 * Watches `dir` and its subdirectories (fs.watch, recursive) and calls
 * `onChange` once per burst of changes, with the paths that changed
 * (relative to `dir`), after `debounceMs` without another change.
 */
export function watchDir(dir: string, onChange: (paths: readonly string[]) => void, opts: WatchOptions = {}): DirWatcher {
  const debounceMs = opts.debounceMs ?? 60;
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const fire = (): void => {
    timer = undefined;
    const paths = [...pending];
    pending = new Set();
    onChange(paths);
  };
  const watcher: FSWatcher = watch(dir, { recursive: true }, (_event, name) => {
    const path = name === null ? '' : String(name);
    if (path && ignoredChange(path)) return;
    pending.add(path);
    if (timer) clearTimeout(timer);
    timer = setTimeout(fire, debounceMs);
  });
  watcher.on('error', (err: Error) => opts.onError?.(err));
  return {
    close: () => {
      if (timer) clearTimeout(timer);
      watcher.close();
    },
  };
}
