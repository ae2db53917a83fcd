/**
 * What `svc --version` prints: which Svc (version and commit), on which Node.js, in which form (the
 * release's single executable, or Node.js running the built files), so an operator can tell what
 * runs on a server.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isSingleExecutable } from '../../shared/runtime/single-executable.js';
import { SVC_NAME, SVC_VERSION } from '../../shared/version.js';

/**
 * The commit the single executable was built from: set by esbuild's `define`
 * (scripts/release/executables.mjs); undeclared elsewhere, hence the `typeof`.
 */
declare const SVC_BUILD_COMMIT: string | undefined;

/** The commit when it cannot be known (a build outside a git checkout). */
export const UNKNOWN_COMMIT = 'unknown';

/**
 * The short commit: the one the executable was built from, else the checkout's (`git rev-parse
 * --short HEAD` in this module's folder), else "unknown" (a copy outside a checkout, no git).
 */
export function buildCommit(): string {
  if (typeof SVC_BUILD_COMMIT === 'string') return SVC_BUILD_COMMIT;
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: fileURLToPath(new URL('.', import.meta.url)),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 10_000,
    }).trim();
    return /^[0-9a-f]{4,}$/.test(commit) ? commit : UNKNOWN_COMMIT;
  } catch {
    return UNKNOWN_COMMIT;
  }
}

/** The lines of `svc --version`. */
export function versionText(): string {
  const runs = isSingleExecutable() ? 'single executable' : `Node.js (${process.execPath})`;
  return [
    `${SVC_NAME} ${SVC_VERSION}`,
    `commit: ${buildCommit()}`,
    `node: ${process.versions.node}`,
    `runs as: ${runs}`,
  ].join('\n');
}
