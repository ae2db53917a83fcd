/**
 * vitest global setup: compiles the product code into dist/ once per run (incremental, so a
 * build that `npm test` just made costs little), because child-process tests run the built CLI.
 * The same steps as `npm run build`: tsc, then the scripts it runs after (package.json).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export default function setup(): void {
  const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
  const build = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`build failed (tsc -p tsconfig.build.json):\n${build.stdout}${build.stderr}`);
  const pkg: unknown = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  const script =
    typeof pkg === 'object' &&
    pkg !== null &&
    'scripts' in pkg &&
    typeof pkg.scripts === 'object' &&
    pkg.scripts !== null &&
    'build' in pkg.scripts
      ? String(pkg.scripts.build)
      : '';
  for (const [, step] of script.matchAll(/\bnode (\S+)/g)) {
    const run = spawnSync(process.execPath, [step ?? ''], { cwd: REPO_ROOT, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`build failed (${step}):\n${run.stdout}${run.stderr}`);
  }
}
