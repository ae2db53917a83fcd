/** Entry point of the `svc` command (edge-agent/bin/svc.js imports this file). */
import { PROCESS_IO } from './io.js';
import { runCli } from './program.js';

const code = await runCli(process.argv.slice(2), PROCESS_IO);
// A service command resolves after its shutdown; exiting here also ends handles a library left open.
process.exit(code);
