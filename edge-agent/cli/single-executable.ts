/**
 * Entry point of the release's single executable (scripts/release/executables.mjs bundles it). What
 * main.ts does, without top-level await: Node's single executables run their main script as
 * CommonJS, which has none.
 */
import { PROCESS_IO } from './io.js';
import { runCli } from './program.js';

runCli(process.argv.slice(2), PROCESS_IO).then(
  // A service command resolves after its shutdown; exiting here also ends handles a library left open.
  (code) => process.exit(code),
  // As an error thrown by main.ts's await: uncaught, so the crash handlers (or Node) report it and exit 1.
  (err: unknown) =>
    process.nextTick(() => {
      throw err;
    }),
);
