/**
 * The alert engine (docs/alerts.md): a lifecycle component that evaluates every rule each
 * `Svc.alerts.evaluationInterval`, the first time at start:
 *
 *   facts → evaluator → AlertStore (state, history) → `silenced` history → dispatcher (channels)
 *
 * The store is opened by `open()` (composition: a file it cannot use stops the start), the alerts
 * active when the last process stopped are loaded at start, so a restart neither fires them again
 * nor forgets them. A store failure is logged once (and again once it works after) and tracked
 * (`STORE_WRITE`); the evaluation goes on with the state held in memory. Stopping finishes the
 * evaluation in flight, waits a few seconds for the sends in flight, and closes the store.
 */

import type { Channel } from '../../shared/alerts/channels/port.js';
import { RetryingChannel } from '../../shared/alerts/channels/retry.js';
import { type ChannelCounters, Dispatcher, type Route, unusedCounters } from '../../shared/alerts/dispatch.js';
import type {
  AlertRecord,
  AlertStore,
  Facts,
  RuleDefinition,
  RuleEvaluation,
  Silence,
  Transitions,
} from '../../shared/alerts/model.js';
import { labelPairs, silenceMatches } from '../../shared/alerts/model.js';
import type { ErrorTracker } from '../../shared/errors/tracker.js';
import type { Log } from '../../shared/logging/log.js';
import type { Component } from '../../shared/runtime/lifecycle.js';
import type { RuleView } from '../../shared/store/api-types.js';

/** How long stopping waits for the notifications in flight. */
export const STOP_SEND_WAIT_MS = 5_000;
/** The module a store failure of the engine is tracked with. */
export const ALERT_ENGINE_MODULE = 'ALERTS';

/** The evaluator as the engine uses it (shared/alerts/rules/evaluator.ts). */
export interface AlertEvaluator {
  evaluate(facts: Facts): { transitions: Transitions; evaluations: RuleEvaluation[] };
}

/** An AlertStore the engine can close. */
export type ClosableAlertStore = AlertStore & { close(): void };

/** What the engine is built from; durations in ms. */
export interface AlertEngineOptions {
  rules: readonly RuleDefinition[];
  channels: readonly Channel[];
  routes: readonly Route[];
  evaluationIntervalMs: number;
  groupWaitMs: number;
  repeatIntervalMs: number;
  externalUrl: string;
  /** Opens the alerts' store (openAlertStore of the store file). */
  openStore: () => ClosableAlertStore;
  /** Builds the evaluator with the alerts restored from the store. */
  evaluator: (restored: AlertRecord[], startedAt: number) => AlertEvaluator;
  /** What Svc knows at `at` (edge-agent/alerts/facts.ts). */
  facts: (at: number) => Facts;
  log: Log;
  errors: Pick<ErrorTracker, 'track'>;
  /** The clock; tests pass their own. */
  now?: () => number;
}

/** The engine; see the module comment. Read by the Alerts page and the metrics endpoint (`Observed.alerts`). */
export class AlertEngine implements Component {
  readonly name = 'alert engine';
  readonly evaluationIntervalMs: number;
  private openedStore: ClosableAlertStore | undefined;
  private dispatcher: Dispatcher | undefined;
  private evaluator: AlertEvaluator | undefined;
  private readonly retrying: RetryingChannel[];
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private activeAlerts: readonly AlertRecord[] = [];
  private readonly lastEvaluations = new Map<string, RuleEvaluation>();
  private silences: readonly Silence[] = [];
  /** fingerprint → the silence that covered it at the last evaluation. */
  private silencedBy = new Map<string, string>();
  private storeFailing = false;

  constructor(private readonly options: AlertEngineOptions) {
    this.evaluationIntervalMs = options.evaluationIntervalMs;
    this.now = options.now ?? Date.now;
    this.retrying = options.channels.map((channel) => new RetryingChannel(channel, options));
  }

  /** Opens the store; throws when its file cannot be used (the composition names the key). */
  open(): void {
    this.openedStore ??= this.options.openStore();
  }

  /** The alerts' store (open once `open()` returned). */
  get store(): AlertStore {
    if (this.openedStore === undefined) throw new Error('the alert engine has not opened its store');
    return this.openedStore;
  }

  start(): Promise<void> {
    this.open();
    const { store } = this;
    const { log, rules } = this.options;
    const restored = store.loadActive();
    this.activeAlerts = restored;
    // The silences already recorded for the restored firing alerts: not recorded a second time.
    this.silencedBy = store.silencedSince(
      restored.flatMap((record) =>
        record.firedAt === null ? [] : [{ fingerprint: record.fingerprint, since: record.firedAt }],
      ),
    );
    this.evaluator = this.options.evaluator(restored, this.now());
    this.dispatcher = new Dispatcher({
      channels: this.retrying,
      routes: this.options.routes,
      groupWaitMs: this.options.groupWaitMs,
      repeatIntervalMs: this.options.repeatIntervalMs,
      externalUrl: this.options.externalUrl,
      store,
      onStoreError: (err) => this.storeFailed(err),
    });
    const builtIn = rules.filter((rule) => rule.builtIn).length;
    const channels = this.retrying.length;
    const firing = restored.filter((record) => record.phase === 'firing').length;
    const restoredText = restored.length === 0 ? '' : `; ${restored.length} alert(s) restored (${firing} firing)`;
    log.info(
      { rules: rules.length, builtIn, channels, restored: restored.length },
      channels === 0
        ? `alerts: ${rules.length} rules (${builtIn} built in), no channel: firing alerts show on /alerts and the metrics endpoint but are not sent${restoredText}`
        : `alerts: ${rules.length} rules (${builtIn} built in), ${channels} channel${channels === 1 ? '' : 's'} (${this.retrying.map(({ channel }) => channel.name).join(', ')})${restoredText}`,
    );
    this.tick();
    this.timer = setInterval(() => this.tick(), this.evaluationIntervalMs);
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
    const drained = (await this.dispatcher?.idle(STOP_SEND_WAIT_MS)) ?? true;
    if (!drained)
      this.options.log.warn(
        { waitedMs: STOP_SEND_WAIT_MS },
        'alerts: notifications still being sent at stop were abandoned; they are sent after the next start',
      );
    this.openedStore?.close();
    this.openedStore = undefined;
  }

  /** Every rule with its last evaluation, for the Alerts page. */
  rules(): RuleView[] {
    return this.options.rules.map((rule) => {
      const last = this.lastEvaluations.get(rule.id);
      return {
        id: rule.id,
        name: rule.name,
        builtIn: rule.builtIn,
        severity: rule.severity,
        text: rule.text,
        forMs: rule.forMs,
        lastEvaluation:
          last === undefined
            ? null
            : {
                at: last.at,
                durationMs: last.durationMs,
                series: last.series,
                pending: last.pending,
                firing: last.firing,
                error: last.error,
              },
      };
    });
  }

  /** Each channel's counters since start (every channel from the start). */
  channels(): ChannelCounters[] {
    return this.dispatcher?.channelCounters() ?? this.retrying.map(({ channel }) => unusedCounters(channel));
  }

  /** The alerts pending or firing after the last evaluation. */
  active(): AlertRecord[] {
    return [...this.activeAlerts];
  }

  /** Runs one evaluation unless one is running or the engine stopped. */
  private tick(): void {
    if (this.running !== undefined || this.stopped) return;
    this.running = Promise.resolve()
      .then(() => this.evaluateOnce(this.now()))
      .catch((err: unknown) => this.options.log.error({ err }, 'alerts: the evaluation failed'))
      .finally(() => {
        this.running = undefined;
      });
  }

  /** One evaluation at `at`: see the module comment. */
  evaluateOnce(at: number): void {
    const { evaluator, dispatcher } = this;
    if (evaluator === undefined || dispatcher === undefined) return;
    const { transitions, evaluations } = evaluator.evaluate(this.options.facts(at));
    for (const evaluation of evaluations) this.lastEvaluations.set(evaluation.ruleId, evaluation);
    this.activeAlerts = transitions.active;
    const applied = this.withStore(() => this.store.applyTransitions(transitions));
    const read = this.withStore(() => {
      this.silences = this.store.activeSilences(at);
    });
    const recorded = this.recordSilenced(transitions.active, at);
    if (applied && read && recorded) this.storeWorks();
    this.logTransitions(transitions);
    dispatcher.dispatch({ at, active: transitions.active, resolved: transitions.resolved, silences: this.silences });
  }

  /** History `silenced` for each firing alert a silence covers now and did not at the last evaluation. */
  private recordSilenced(active: readonly AlertRecord[], at: number): boolean {
    const now = new Map<string, string>();
    for (const record of active) {
      if (record.phase !== 'firing') continue;
      const silence = this.silences.find((candidate) => silenceMatches(candidate, record.labels, at));
      if (silence !== undefined) now.set(record.fingerprint, silence.id);
    }
    const newly = active.filter(
      (record) =>
        now.has(record.fingerprint) && this.silencedBy.get(record.fingerprint) !== now.get(record.fingerprint),
    );
    this.silencedBy = now;
    if (newly.length === 0) return true;
    return this.withStore(() =>
      this.store.record(
        newly.map((record) => ({
          at,
          fingerprint: record.fingerprint,
          rule: record.rule,
          severity: record.severity,
          labels: record.labels,
          event: 'silenced' as const,
          value: record.value,
          channel: null,
          detail: now.get(record.fingerprint) ?? null,
        })),
      ),
    );
  }

  private logTransitions(transitions: Transitions): void {
    const { log } = this.options;
    for (const record of transitions.fired)
      log.info(
        { alert: record.rule, severity: record.severity, labels: record.labels, value: record.value },
        `alert ${record.rule} fired (${labelPairs(record.labels).join(', ')}): ${record.summary} (value ${record.value})`,
      );
    for (const record of transitions.resolved)
      log.info(
        { alert: record.rule, severity: record.severity, labels: record.labels, value: record.value },
        `alert ${record.rule} resolved (${labelPairs(record.labels).join(', ')}), last value ${record.value}`,
      );
  }

  /** Runs a store call; a failure is logged (once) and tracked, and the evaluation goes on. False when it failed. */
  private withStore(call: () => void): boolean {
    try {
      call();
      return true;
    } catch (err) {
      this.storeFailed(err);
      return false;
    }
  }

  /** Every store call of an evaluation worked: says so once after a failure. */
  private storeWorks(): void {
    if (!this.storeFailing) return;
    this.storeFailing = false;
    this.options.log.info({}, 'alerts: the store works again');
  }

  private storeFailed(err: unknown): void {
    this.options.errors.track('STORE_WRITE', err, { module: ALERT_ENGINE_MODULE });
    if (this.storeFailing) return;
    this.storeFailing = true;
    this.options.log.error(
      { err },
      'alerts: the store failed; alerts are still evaluated and sent from the state held in memory, and a line is logged once it works again',
    );
  }
}
