/**
 * What `npm run build` leaves in dist/ (test/support/build.ts builds before the suites): a process
 * holds the text of every module it loads, so the emitted JavaScript carries no comments; the
 * source maps still lead a stack trace back to the commented sources.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/build.js';

const MODULES = ['shared/destinations/files/parquet', 'edge-agent/runtime/boot', 'shared/config/validate'];

describe('the build output', () => {
  for (const module of MODULES) {
    it(`dist/${module}.js has no comments, and its source map names the source`, () => {
      const source = readFileSync(join(REPO_ROOT, `${module}.ts`), 'utf8');
      expect(source).toMatch(/\/\*\*|\/\/ /);
      const emitted = readFileSync(join(REPO_ROOT, 'dist', `${module}.js`), 'utf8');
      expect(emitted).not.toMatch(/\/\*\*|^\s*\/\/ /m);
      expect(emitted).toMatch(/\/\/# sourceMappingURL=\S+\.js\.map\s*$/);
      const map: unknown = JSON.parse(readFileSync(join(REPO_ROOT, 'dist', `${module}.js.map`), 'utf8'));
      expect(map).toMatchObject({
        sources: [expect.stringMatching(new RegExp(`${module.split('/').at(-1) ?? ''}\\.ts$`))],
      });
    });
  }
});
