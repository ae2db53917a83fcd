import { defineConfig } from 'vitest/config';

// The config of test/support/setup.test.ts's inner run: the project's setup file, one failing test.
export default defineConfig({
  test: { include: ['test/support/left-child/*.check.ts'], setupFiles: ['test/support/setup.ts'], pool: 'forks' },
});
