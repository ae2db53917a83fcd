/**
 * Where the repository is, seen from the CDK app. The app runs compiled from dist/infra/ (the CDK
 * CLI) or as TypeScript from infra/ (the tests), so paths are resolved from the repository root,
 * found by walking up to the directory that holds package-lock.json.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRepoRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package-lock.json'))) return dir;
    if (dirname(dir) === dir)
      throw new Error(`no package-lock.json above ${start}: the CDK app must run inside the Svc repository`);
  }
}

/** Absolute path of the repository root (it holds package.json and package-lock.json). */
export const REPO_ROOT = findRepoRoot(dirname(fileURLToPath(import.meta.url)));

/** The lock file esbuild bundling uses to find the project's dependencies. */
export const LOCK_FILE = join(REPO_ROOT, 'package-lock.json');

/** Absolute path of a file given relative to the repository root, e.g. `functions/audit/lambda.ts`. */
export function repoPath(relative: string): string {
  return join(REPO_ROOT, relative);
}
