import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Child-process tests run the built CLI and modules: build once before any suite.
    globalSetup: ['test/support/build.ts'],
    // Stops what a failed test left running when its file ends (test/support/setup.ts).
    setupFiles: ['test/support/setup.ts'],
    environment: 'node',
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites start their own servers (influxd, mosquitto, emulators) on free ports; two
    // workers match the two cores of the reference machine.
    maxWorkers: 2,
  },
});
