#!/usr/bin/env node
// The `svc` command: runs the built CLI. The README's setup command builds it.
import { fileURLToPath } from 'node:url';

// Svc runs on Node 24 LTS (docs/development.md). On an older Node, one line that says so, not a
// syntax or module error from deep inside the CLI. This file itself parses on any Node with ESM.
const NEEDED_MAJOR = 24;
const major = Number(process.versions.node.split('.')[0]);
if (!(major >= NEEDED_MAJOR)) {
  process.stderr.write(
    `svc needs Node.js ${NEEDED_MAJOR} or later; this is Node.js ${process.versions.node} (${process.execPath}). ` +
      'In a checkout, run it as `npx svc …` after `bash scripts/setup.sh` (it brings Node 24); elsewhere install Node.js 24 LTS.\n',
  );
  process.exit(1);
}

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
