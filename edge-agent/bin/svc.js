#!/usr/bin/env node
// The `svc` command: runs the built CLI. The README's setup command (`npm ci`) builds it.
import { fileURLToPath } from 'node:url';

const entry = new URL('../../dist/edge-agent/cli/main.js', import.meta.url);
try {
  await import(entry.href);
} catch (err) {
  const notBuilt =
    err instanceof Error &&
    'code' in err &&
    err.code === 'ERR_MODULE_NOT_FOUND' &&
    err.message.includes(fileURLToPath(entry));
  if (!notBuilt) throw err;
  process.stderr.write(
    `svc is not built yet (missing ${fileURLToPath(entry)}): run \`npm run build\` in the checkout\n`,
  );
  process.exit(1);
}
