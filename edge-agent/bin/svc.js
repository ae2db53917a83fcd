#!/usr/bin/env -S node --max-semi-space-size=16
// The `svc` command: runs the built CLI. The README's setup command builds it.
// --max-semi-space-size=16 (MB): Node 24's V8 sizes the young generation from the machine's memory,
// up to 64 MB semi-spaces on a server (128 MB committed), where Node 20's stopped at 16; with the
// young generation Svc had on Node 20 its RSS under load stays near Node 20's (bench/memory.mjs
// --load: 171 against 272 MB; docs/operations.md "Memory"). Every launcher passes the same flags
// (the Dockerfile, the systemd unit, the Windows service: test/deploy/files.test.ts holds them to
// this line).
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
