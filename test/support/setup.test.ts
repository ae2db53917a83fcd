/** The per-file setup (setup.ts) stops a child process that a failing test left running. */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { REPO_ROOT } from './build.js';

const run = promisify(execFile);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

it('stops the child of a test that failed before stopping it', async () => {
  const pidFile = join(mkdtempSync(join(tmpdir(), 'left-child-')), 'pid');
  const vitest = join(REPO_ROOT, 'node_modules/.bin/vitest');
  const outcome = await run(vitest, ['run', '--config', 'test/support/left-child/vitest.config.ts'], {
    cwd: REPO_ROOT,
    env: { ...process.env, LEFT_CHILD_PID_FILE: pidFile },
  }).then(
    () => ({ failed: false, output: '' }),
    (err: { stdout?: string; stderr?: string }) => ({ failed: true, output: `${err.stdout ?? ''}${err.stderr ?? ''}` }),
  );
  expect(outcome.failed).toBe(true);
  expect(outcome.output).toContain('stopped 1 child process(es) the test file left running');
  const pid = Number(readFileSync(pidFile, 'utf8'));
  expect(pid).toBeGreaterThan(0);
  expect(alive(pid)).toBe(false);
});
