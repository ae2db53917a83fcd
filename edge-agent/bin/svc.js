#!/usr/bin/env -S node --max-semi-space-size=8 --heap-growing-percent=50
// The `svc` command: runs the built CLI. The README's setup command (`npm ci`) builds it.
// The node flags of the line above bound V8's heap under load (bench/README.md "memory.mjs"; measured
// at 3,000 audit requests/s + 20,000 datagrams/s: RSS peak 176–231 MB without them, 149–155 with):
// --max-semi-space-size=8   the young generation takes at most 16 MB instead of Node's 32 MB;
// --heap-growing-percent=50 after a full GC the old generation may grow by 50 % of what survived
//                           before the next one, where V8 lets it grow up to 4× on a machine with
//                           much RAM: what piled up there until then was garbage (promoted events
//                           and the queue's settled bodies), not live data.
// Each cost no CPU per request or datagram that could be measured on this machine (1–4 MB semi-spaces
// and 20 % did). Heap flags only work on node's command line (v8.setFlagsFromString comes too late for
// the young generation), so every launcher passes the same ones: this line for `npx svc` and
// `./svc.js`, and deploy/Dockerfile, deploy/systemd/svc.service and deploy/windows/svc.xml.
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
