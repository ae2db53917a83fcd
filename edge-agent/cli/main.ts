/** Entry point of the `svc` command (edge-agent/bin/svc.js imports this file). */
import { runCli } from './program.js';

const code = await runCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
});
// A service command resolves after its shutdown; exiting here also ends handles a library left open.
process.exit(code);
