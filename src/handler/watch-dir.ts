import { existsSync, readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { basename, join, relative } from 'node:path';

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
const IGNORED_DIR = /^(node_modules|\.git)$/;

/** True for a path (relative to the watched directory) whose change should not reload anything. */
export function ignoredChange(path: string): boolean {
  return path.split(/[\\/]/).some((part) => IGNORED_DIR.test(part)) || IGNORED_NAME.test(basename(path));
}

/**
 * Watches `root` and its subdirectories and calls `onChange` once per burst of
 * changes, with the paths that changed (relative to `root`), after
 * `debounceMs` without another change.
 *
 * Each directory is watched, never a file: an editor that saves by writing a
 * new file and renaming it over the old one (vim, JetBrains, `sed -i`) is seen
 * every time. (Node 20's `recursive: true` on Linux watches each file's inode,
 * and loses a file after its first such save.) New subdirectories are watched
 * as they appear.
 */
export function watchDir(root: string, onChange: (paths: readonly string[]) => void, opts: WatchOptions = {}): DirWatcher {
  const debounceMs = opts.debounceMs ?? 60;
  const watchers = new Map<string, FSWatcher>();
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const fail = (err: Error): void => {
    if (!closed) opts.onError?.(err);
  };
  const add = (dir: string): void => {
    if (closed || watchers.has(dir)) return;
    try {
      const w = watch(dir, (_event, name) => changed(name === null ? dir : join(dir, String(name))));
      w.on('error', (err: Error) => (dir === root ? fail(err) : undefined));
      watchers.set(dir, w);
      for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory() && !IGNORED_DIR.test(e.name)) add(join(dir, e.name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') fail(err as Error);
    }
  };
  const fire = (): void => {
    timer = undefined;
    for (const [dir, w] of watchers)
      if (!existsSync(dir)) {
        w.close();
        watchers.delete(dir);
      }
    if (!existsSync(root)) fail(new Error(`${root} was removed`));
    const paths = [...pending];
    pending = new Set();
    onChange(paths);
  };
  const changed = (path: string): void => {
    const rel = relative(root, path);
    if (closed || (rel && ignoredChange(rel))) return;
    try {
      if (statSync(path).isDirectory()) add(path);
    } catch {
      // removed: its watcher is dropped when the burst ends
    }
    pending.add(rel);
    if (timer) clearTimeout(timer);
    timer = setTimeout(fire, debounceMs);
  };

  add(root);
  return {
    close: () => {
      closed = true;
      if (timer) clearTimeout(timer);
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}
