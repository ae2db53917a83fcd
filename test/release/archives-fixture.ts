/**
 * A release built by the real scripts/release/archives.mjs from stand-in executables: each target's
 * `svc` / `svc.exe` is a copy of /bin/true, a small real executable, so these tests need not build
 * the single executables (scripts/release/executables.mjs). Nothing here depends on what the
 * executable is: the archive tests check names, modes and the other files. The archives around the
 * real executables are checked in test/release/executable.test.ts, which builds them once.
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isRecord } from '../../shared/util/records.js';
import { REPO_ROOT } from '../support/build.js';

/** The stand-in for every target's executable. */
export const STAND_IN = '/bin/true';
/** Svc's version, as the archive names carry it. */
export const VERSION = versionOf(JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')));

function versionOf(manifest: unknown): string {
  if (!isRecord(manifest) || typeof manifest['version'] !== 'string') throw new Error('package.json has no version');
  return manifest['version'];
}

/** A built release: its folder (`release/` of the script) and the script's run. */
export interface Release {
  out: string;
  run: SpawnSyncReturns<string>;
}

/** Runs archives.mjs on a build folder holding stand-ins for `targets` (e.g. linux-x64 → svc). */
export function buildRelease(targets: readonly string[]): Release {
  const root = mkdtempSync(join(tmpdir(), 'svc-release-'));
  const build = join(root, 'build');
  for (const target of targets) {
    mkdirSync(join(build, target), { recursive: true });
    copyFileSync(STAND_IN, join(build, target, target.startsWith('win-') ? 'svc.exe' : 'svc'));
  }
  const out = join(root, 'release');
  const run = spawnSync(
    process.execPath,
    [join(REPO_ROOT, 'scripts/release/archives.mjs'), '--build', build, '--out', out],
    { cwd: REPO_ROOT, encoding: 'utf8' },
  );
  return { out, run };
}
