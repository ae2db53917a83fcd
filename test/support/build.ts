/**
 * vitest global setup: compiles the product code into dist/ once per run (incremental, so a
 * build that `npm test` just made costs little), because child-process tests run the built CLI.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export default function setup(): void {
  const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
  const build = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`build failed (tsc -p tsconfig.build.json):\n${build.stdout}${build.stderr}`);
}
