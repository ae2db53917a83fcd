/**
 * A real small filesystem for the full-disk tests: a tmpfs mounted by the test (root only). The
 * kernel's own ENOSPC and short writes are what those tests are about; no stand-in reproduces them.
 * Where mounting is not allowed, `reason` says why and the tests skip with it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Tmpfs {
  /** The mount point (or a plain directory when `reason` is set). */
  path: string;
  /** Why no tmpfs could be mounted; '' when it is mounted. */
  reason: string;
  unmount(): void;
}

/** Mounts a tmpfs of `size` (e.g. `64k`, `1m`) at a new directory, or at `at`. */
export function mountTmpfs(size: string, what: string, at?: string): Tmpfs {
  const path = at ?? mkdtempSync(join(tmpdir(), 'svc-tmpfs-'));
  mkdirSync(path, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', path], { stdio: 'pipe' });
  } catch (err) {
    const reason = `cannot mount a tmpfs here (${err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err)}); run the tests as root to include ${what}`;
    console.warn(`skipped: ${what}: ${reason}`);
    return { path, reason, unmount: () => undefined };
  }
  let mounted = true;
  return {
    path,
    reason: '',
    unmount: () => {
      if (mounted) execFileSync('umount', [path]);
      mounted = false;
    },
  };
}
