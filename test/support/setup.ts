/**
 * Runs before every test file (vitest `setupFiles`): whatever child process a test started and did
 * not stop (a test that failed before its own stop) is stopped when the file ends.
 */
import { afterAll } from 'vitest';
import { stopLeftChildren } from './ports.js';

afterAll(async () => {
  const stopped = await stopLeftChildren();
  if (stopped > 0) console.warn(`stopped ${stopped} child process(es) the test file left running`);
});
