/**
 * Run only by test/support/setup.test.ts, through its own vitest config: a test that starts a child
 * process and fails before stopping it. The setup file must stop the child when the file ends.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { trackChild } from '../ports.js';

it('starts a child, then fails before stopping it', () => {
  const child = trackChild(spawn('sleep', ['300']));
  writeFileSync(process.env['LEFT_CHILD_PID_FILE'] ?? '', String(child.pid));
  expect('the test').toBe('failed before its own stop');
});
