/**
 * vitest global setup: compiles the product code into dist/ once per run (incremental, so a
 * build that `npm test` just made costs little), because child-process tests run the built CLI.
 * The same two steps as `npm run build`: tsc, then the config validator's generated code.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export default function setup(): void {
  const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
  const build = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`build failed (tsc -p tsconfig.build.json):\n${build.stdout}${build.stderr}`);
  const generate = spawnSync(process.execPath, ['scripts/build-config-validator.mjs'], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (generate.status !== 0) throw new Error(`build failed (scripts/build-config-validator.mjs):\n${generate.stdout}${generate.stderr}`);
}
