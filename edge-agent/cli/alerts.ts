/**
 * `svc alerts list | silence | expire`: the alerts pending and firing, and the silences, in the store
 * file of the config (`Svc.store.path`), whether Svc runs or not: the engine reads the silences from
 * the file at each evaluation, so a silence made here holds from the next one.
 */
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import { labelPairs } from '../../shared/alerts/model.js';
import type { SilenceProblem } from '../../shared/alerts/silences.js';
import type { LoadedConfig } from '../../shared/config/load.js';
import { EXIT_ERROR, EXIT_OK, EXIT_USAGE } from '../../shared/runtime/exit-codes.js';
import type { CliIo } from './io.js';
import { loadForCli } from './run.js';

const configOption = '-c, --config <file>';
const configHelp = 'config file (.yaml or .yml); default: $SVC_CONFIG, else ./config/svc.yaml';

/** The CLI option of each field a silence can be refused for. */
const OPTION_OF: Readonly<Record<SilenceProblem['field'], string>> = {
  rule: '--rule',
  matchers: '--label',
  endsAt: '--until',
  duration: '--for',
};

/** Collects repeated `--label k=v` into one object; a value without `=` or with an empty name is a usage error. */
function collectLabel(text: string, labels: Record<string, string>): Record<string, string> {
  const equals = text.indexOf('=');
  if (equals <= 0)
    throw new InvalidArgumentError(`${JSON.stringify(text)} is not a label as name=value, e.g. server=node2`);
  return { ...labels, [text.slice(0, equals).trim()]: text.slice(equals + 1) };
}

/** The OS user running the command, for `--by`; empty when the system has no name for it. */
function osUserName(env: NodeJS.ProcessEnv): string {
  try {
    return userInfo().username;
  } catch {
    return env['USER'] ?? env['USERNAME'] ?? '';
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The config's store file, or an error printed and undefined when the store is off (alerts keep no state then). */
function storeFile(loaded: LoadedConfig, io: CliIo): string | undefined {
  if (loaded.config.store.enable) return resolve(loaded.config.store.path);
  io.err(
    `svc: ${loaded.file}: the embedded store is off (Svc.store.enable: false), so alerts keep no state to show or silence\n`,
  );
  return undefined;
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Registers `svc alerts` and its commands on `program`. */
export function registerAlertsCommand(program: Command, io: CliIo, setExitCode: (code: number) => void): void {
  const alerts = program
    .command('alerts')
    .description("the alerts pending and firing, and their silences, in the config's store file (docs/alerts.md)");

  alerts
    .command('list')
    .description(
      'list the alerts pending and firing (rule, severity, labels, since, value, silenced by) and the active silences',
    )
    .option(configOption, configHelp)
    .option('--json', 'print {alerts, silences} as the read API answers them (GET /api/v1/alerts)')
    .action(async (opts: { config?: string; json?: boolean }) => {
      const loaded = loadForCli(opts.config, io);
      const file = loaded && storeFile(loaded, io);
      if (!file) return setExitCode(EXIT_ERROR);
      const now = Date.now();
      const { alertViews, silenceView } = await import('../../shared/alerts/silences.js');
      let views: ReturnType<typeof alertViews> = [];
      let silences: ReturnType<typeof silenceView>[] = [];
      // No file yet: nothing ever fired, and listing creates none.
      if (existsSync(file)) {
        const { openAlertStore } = await import('../../shared/alerts/store.js');
        try {
          const store = openAlertStore(file);
          try {
            const active = store.activeSilences(now);
            views = alertViews(store.loadActive(), active, now);
            silences = active.map((silence) => silenceView(silence, now));
          } finally {
            store.close();
          }
        } catch (err) {
          io.err(`svc: cannot read the alerts of the store ${file}: ${messageOf(err)}\n`);
          return setExitCode(EXIT_ERROR);
        }
      }
      if (opts.json) {
        io.out(`${JSON.stringify({ alerts: views, silences }, null, 2)}\n`);
        return setExitCode(EXIT_OK);
      }
      if (views.length === 0) io.out('no alert is firing\n');
      for (const view of views)
        io.out(
          `${view.phase.toUpperCase().padEnd(7)}  ${view.severity.padEnd(8)}  ${view.rule}  ${labelPairs(view.labels).join(' ')}  since ${iso(view.firedAt ?? view.activeSince)}  value ${view.value}${view.silencedBy ? `  silenced by ${view.silencedBy}` : ''}\n`,
        );
      io.out(silences.length === 0 ? 'no active silence\n' : 'silences:\n');
      for (const silence of silences)
        io.out(
          `${silence.id}  ${[silence.rule ? `rule=${silence.rule}` : 'any rule', labelPairs(silence.matchers).join(' ')].filter(Boolean).join(' ')}  until ${iso(silence.endsAt)}  by ${silence.createdBy || '(unknown)'}${silence.comment ? `  ${JSON.stringify(silence.comment)}` : ''}\n`,
        );
      setExitCode(EXIT_OK);
    });

  alerts
    .command('silence')
    .description(
      'silence alerts by rule and labels until a time: they are still evaluated and shown, but not notified; prints the id and the end',
    )
    .option(configOption, configHelp)
    .option('--rule <name>', 'the rule (alertname): a built-in rule or one of Svc.alerts.rules')
    .option(
      '--label <name=value>',
      'a label the alerts must have, e.g. server=node2; repeat for more',
      collectLabel,
      {},
    )
    .option('--for <duration>', 'how long, from now: 30m, 2h, 1d')
    .option('--until <time>', 'when it ends, RFC 3339, e.g. 2026-11-22T18:00:00Z')
    .option('--comment <text>', 'why', '')
    .option('--by <name>', 'who silences; default: the OS user name')
    .action(
      async (opts: {
        config?: string;
        rule?: string;
        label: Record<string, string>;
        for?: string;
        until?: string;
        comment: string;
        by?: string;
      }) => {
        const loaded = loadForCli(opts.config, io);
        const file = loaded && storeFile(loaded, io);
        if (!loaded || !file) return setExitCode(EXIT_ERROR);
        const { knownRuleNames, silenceFromAsk } = await import('../../shared/alerts/silences.js');
        const now = Date.now();
        const asked = silenceFromAsk(
          {
            rule: opts.rule,
            matchers: opts.label,
            endsAt: opts.until,
            duration: opts.for,
            comment: opts.comment,
            createdBy: opts.by ?? osUserName(io.env),
          },
          knownRuleNames(loaded.config.alerts),
          now,
        );
        if ('problem' in asked) {
          const { field, message } = asked.problem;
          const option = field === 'endsAt' && opts.until === undefined ? '--for or --until' : OPTION_OF[field];
          io.err(`error: ${option}: ${message}\n`);
          return setExitCode(EXIT_USAGE);
        }
        const { openAlertStore } = await import('../../shared/alerts/store.js');
        try {
          const store = openAlertStore(file);
          try {
            const silence = store.addSilence(asked.silence);
            io.out(`silence ${silence.id} until ${iso(silence.endsAt)}\n`);
          } finally {
            store.close();
          }
          setExitCode(EXIT_OK);
        } catch (err) {
          io.err(`svc: cannot add the silence to the store ${file}: ${messageOf(err)}\n`);
          setExitCode(EXIT_ERROR);
        }
      },
    );

  alerts
    .command('expire')
    .description('end a silence now (its id as `svc alerts list` shows it)')
    .argument('<id>', "the silence's id: 8 hex digits")
    .option(configOption, configHelp)
    .action(async (id: string, opts: { config?: string }) => {
      const loaded = loadForCli(opts.config, io);
      const file = loaded && storeFile(loaded, io);
      if (!file) return setExitCode(EXIT_ERROR);
      const { openAlertStore } = await import('../../shared/alerts/store.js');
      try {
        const store = existsSync(file) ? openAlertStore(file) : undefined;
        try {
          if (!store?.expireSilence(id, Date.now())) {
            io.err(
              `svc: no active silence has the id ${JSON.stringify(id)} in the store ${file} (svc alerts list shows them)\n`,
            );
            return setExitCode(EXIT_ERROR);
          }
        } finally {
          store?.close();
        }
        io.out(`silence ${id} expired\n`);
        setExitCode(EXIT_OK);
      } catch (err) {
        io.err(`svc: cannot expire the silence in the store ${file}: ${messageOf(err)}\n`);
        setExitCode(EXIT_ERROR);
      }
    });
}
