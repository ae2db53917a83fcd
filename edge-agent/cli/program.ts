/**
 * The `svc` command line. Exit codes: 0 ok, 1 config or startup error, 2 usage error.
 */

import { existsSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { replayDeadLetters } from '../../shared/queue/local/index.js';
import { EXIT_ERROR, EXIT_OK, EXIT_USAGE } from '../../shared/runtime/exit-codes.js';
import { proxyProblems, resolveProxy } from '../../shared/runtime/proxy.js';
import type { Mode } from '../runtime/boot.js';
import { platformQueueDirectory } from '../runtime/platform-pipeline.js';
import { checkStartFiles } from '../runtime/start-checks.js';
import { accessConfigError, accessWarning } from '../sources/platform/startup.js';
import type { CliIo } from './io.js';
import { loadForCli, printConfigError, runService } from './run.js';
import { versionText } from './version.js';

const configOption = () =>
  new Option('-c, --config <file>', 'config file (.yaml or .yml); default: $SVC_CONFIG, else ./config/svc.yaml');

/**
 * The commands that run the service. When argv names one of them, the program is built without
 * `svc simulate`, `svc demo` and `svc alerts`: their modules (the platform simulator, node-forge for its
 * certificates, the alerts' store) would only take memory in a long-running process. Every other argv (help included)
 * gets every command.
 */
const SERVICE_COMMANDS: ReadonlySet<string> = new Set<Mode>(['local', 'edge']);

export async function buildProgram(
  io: CliIo,
  setExitCode: (code: number) => void,
  commands: 'all' | 'service' = 'all',
): Promise<Command> {
  const program = new Command('svc')
    .description('Svc: monitoring and event forwarding for the analytics platform')
    // Not commander's .version(text): the text is made only when asked for (it may run git).
    .option('-v, --version', 'print the version, the commit, the Node.js version and the form Svc runs in')
    .helpOption('-h, --help', 'show help')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride();

  program.on('option:version', () => {
    const text = versionText();
    io.out(`${text}\n`);
    throw new CommanderError(EXIT_OK, 'commander.version', text);
  });

  program
    .command('validate-config')
    .description(
      "check a config file and report every problem (the pollers' certificate files and app-list host, the tsdb's CA file, MQTT's TLS files and credentials, and the proxy included), and warn about each switch of a feature not built yet; starts nothing",
    )
    .addOption(configOption())
    .action(async (opts: { config?: string }) => {
      const loaded = loadForCli(opts.config, io);
      if (!loaded) return setExitCode(EXIT_ERROR);
      // What start-up checks beyond the file itself: the files and hosts the config names.
      const access = await checkStartFiles(loaded.config);
      for (const warning of [...loaded.warnings, ...loaded.notBuilt, ...access.warnings.map(accessWarning)])
        io.err(`warning: ${warning}\n`);
      if (access.problems.length > 0) {
        printConfigError(loaded.file, accessConfigError(loaded.file, access.problems), io);
        return setExitCode(EXIT_ERROR);
      }
      // The proxy of Svc.proxy and of this environment, as start-up would install it.
      const proxy = proxyProblems(resolveProxy(loaded.config.proxy, io.env));
      if (proxy.length > 0) {
        for (const problem of proxy) io.err(`svc: ${loaded.file} Svc.proxy: ${problem}\n`);
        return setExitCode(EXIT_ERROR);
      }
      // References are checked for syntax only: fetching them needs AWS credentials this check should not.
      const refs = loaded.secretRefs.length;
      if (refs > 0)
        io.out(
          `${refs} secret reference${refs === 1 ? '' : 's'} not fetched: svc local, svc edge and the Lambda functions fetch them at start\n`,
        );
      io.out(`${loaded.file}: configuration is valid\n`);
      setExitCode(EXIT_OK);
    });

  const runCommand = (mode: Mode, description: string) =>
    program
      .command(mode)
      .description(description)
      .addOption(configOption())
      .action(async (opts: { config?: string }) => {
        const loaded = loadForCli(opts.config, io);
        if (!loaded) return setExitCode(EXIT_ERROR);
        setExitCode(await runService(loaded, mode, io));
      });
  program
    .command('dlq')
    .description('dead-letter folders of the local queue')
    .command('replay')
    .description(
      'put dead-lettered messages back on the local queue for their destination (Svc must not be running on that queue)',
    )
    .addOption(configOption())
    .option('-g, --group <destination>', 'only this destination (e.g. tsdb, parquet)')
    .action(async (opts: { config?: string; group?: string }) => {
      const loaded = loadForCli(opts.config, io);
      if (!loaded) return setExitCode(EXIT_ERROR);
      const directory = loaded.config.localQueue.directory;
      // The audit API's queue, and the UDP events' queue below it.
      const queues = [directory, platformQueueDirectory(directory)].filter((d) => existsSync(d));
      // What the journal finds wrong while it opens (damaged records) goes to stderr.
      const say = (_obj: object, msg: string) => io.err(`svc: ${msg}\n`);
      const journalLog = { debug: () => undefined, info: () => undefined, warn: say, error: say };
      try {
        let replayed = 0;
        for (const queue of queues) {
          for (const r of await replayDeadLetters(queue, journalLog, opts.group)) {
            replayed += 1;
            io.out(`${queue}: ${r.group}: replayed ${r.messages} message(s) with ${r.events} event(s)\n`);
          }
        }
        if (replayed === 0)
          io.out(`no dead letters to replay in ${directory}${opts.group ? ` for ${opts.group}` : ''}\n`);
        setExitCode(EXIT_OK);
      } catch (err) {
        io.err(`svc: cannot replay dead letters: ${err instanceof Error ? err.message : String(err)}\n`);
        setExitCode(EXIT_ERROR);
      }
    });

  program
    .command('store')
    .description('the embedded store (Svc.store, docs/store.md)')
    .command('backup')
    .description('copy the store to a new file while Svc runs (SQLite online backup: a consistent snapshot)')
    .addOption(configOption())
    .requiredOption('--to <file>', 'the copy to write (must not exist)')
    .action(async (opts: { config?: string; to: string }) => {
      const loaded = loadForCli(opts.config, io);
      if (!loaded) return setExitCode(EXIT_ERROR);
      try {
        const { backupStore } = await import('../../shared/store/backup.js');
        const pages = await backupStore(loaded.config.store.path, opts.to);
        io.out(`copied the store ${loaded.config.store.path} to ${opts.to} (${pages} pages)\n`);
        setExitCode(EXIT_OK);
      } catch (err) {
        io.err(`svc: cannot back up the store: ${err instanceof Error ? err.message : String(err)}\n`);
        setExitCode(EXIT_ERROR);
      }
    });

  if (commands === 'all') {
    const [{ registerSimulateCommand }, { registerDemoCommand }, { registerAlertsCommand }] = await Promise.all([
      import('../simulate/command.js'),
      import('./demo.js'),
      import('./alerts.js'),
    ]);
    registerSimulateCommand(program, io, setExitCode);
    registerDemoCommand(program, io, setExitCode);
    registerAlertsCommand(program, io, setExitCode);
  }

  runCommand(
    'local',
    'run on this machine: the audit API gateway, the UDP listeners and the platform pollers, with the durable local queue and the writers behind them',
  );
  runCommand(
    'edge',
    'run the edge agent: the UDP listeners and the platform pollers, with the durable local queue and the writers behind them (no audit API)',
  );
  return program;
}

/** Parses argv and runs the command; resolves to the exit code for commands that finish. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let code = EXIT_OK;
  const program = await buildProgram(io, (c) => (code = c), SERVICE_COMMANDS.has(argv[0] ?? '') ? 'service' : 'all');
  if (argv.length === 0) {
    io.err(program.helpInformation());
    return EXIT_USAGE;
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      return ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(err.code)
        ? EXIT_OK
        : EXIT_USAGE;
    }
    throw err;
  }
}
