#!/usr/bin/env -S node --max-semi-space-size=8
// The `svc` command: runs the built CLI. The README's setup command (`npm ci`) builds it.
// --max-semi-space-size=8 (MB per semi-space; Node's default lets it grow to 16): V8's young
// generation takes at most 16 MB instead of 32 MB under load, at no CPU cost measured (8 MB still
// holds what a busy second allocates between scavenges; 1–4 MB cost 10–30 % more CPU per request).
// A V8 heap flag only works on node's command line (v8.setFlagsFromString comes too late for the
// young generation), so every launcher passes it: this line for `npx svc` and `./svc.js`, and
// deploy/Dockerfile, deploy/systemd/svc.service and deploy/windows/svc.xml (bench/README.md "memory.mjs").
import { fileURLToPath } from 'node:url';

const entry = new URL('../../dist/edge-agent/cli/main.js', import.meta.url);
try {
  await import(entry.href);
} catch (err) {
  const notBuilt = err instanceof Error && 'code' in err && err.code === 'ERR_MODULE_NOT_FOUND' && err.message.includes(fileURLToPath(entry));
  if (!notBuilt) throw err;
  process.stderr.write(`svc is not built yet (missing ${fileURLToPath(entry)}): run \`npm run build\` in the checkout\n`);
  process.exit(1);
}
