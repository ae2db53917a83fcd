/**
 * Composes the alert engine from `Svc.alerts` (docs/alerts.md): the rules (the built-in pack and the
 * operator's), the channels, the facts read from `Observed` and the pollers, and the store file of
 * `Svc.store`. Built only when `Svc.alerts.enable` and the store are both on; otherwise one line says
 * why not. The engine registers itself as `observed.alerts` (the Alerts page, its API, the metrics).
 */
import { hostname } from 'node:os';
import { buildChannel, type ChannelDependencies } from '../../shared/alerts/channels/build.js';
import { ruleDefinitions } from '../../shared/alerts/rules/definitions.js';
import { Evaluator } from '../../shared/alerts/rules/evaluator.js';
import { openAlertStore } from '../../shared/alerts/store.js';
import type { MqttWriter } from '../../shared/destinations/mqtt/client.js';
import type { AppContext } from '../../shared/runtime/context.js';
import type { Component } from '../../shared/runtime/lifecycle.js';
import { parseDuration } from '../../shared/util/duration.js';
import type { Observed } from '../endpoints/observed.js';
import type { PollSink } from '../sources/platform/sink.js';
import { polledServers } from '../sources/platform/startup.js';
import { AlertEngine } from './engine.js';
import { AlertFacts, AlertPollSink } from './facts.js';

/** The engine, the components to run, and the facts' PollSink. */
export interface AlertsComposition {
  engine: AlertEngine;
  /** The engine. (Its mqtt channels publish through the process's MQTT client, which the caller starts before it.) */
  components: Component[];
  /** Joins the pollers' sinks: each server's last health answer and sessions. */
  pollSink: PollSink;
}

/** The base of the links in notifications: `Svc.alerts.externalUrl`, or this host's web view. */
export function externalUrlOf(config: AppContext['config']): string {
  const configured = config.alerts.externalUrl;
  if (configured !== '') return configured.replace(/\/+$/, '');
  return `http://${hostname()}:${config.configVisualisation.port}`;
}

/** Whether the alert engine runs (alerts and the store on) with an mqtt channel: then it needs the process's MQTT client. */
export function alertsUseMqtt(config: AppContext['config'], storeOn: boolean): boolean {
  return config.alerts.enable && storeOn && config.alerts.channels.some((channel) => channel.type === 'mqtt');
}

/** The alert engine of the config, or null (with one line saying why) when alerts are off. */
export function alertComponents(
  ctx: AppContext,
  options: {
    observed: Observed;
    storeOn: boolean;
    /** The process's MQTT client (processMqttWriter), started before the engine; needed when an mqtt channel is set. */
    mqtt?: MqttWriter | null;
    now?: () => number;
  },
): AlertsComposition | null {
  const { config, logger } = ctx;
  const alerts = config.alerts;
  if (!alerts.enable) {
    logger.info({ config: 'Svc.alerts.enable' }, 'alerts: off (Svc.alerts.enable is false)');
    return null;
  }
  if (!options.storeOn) {
    logger.warn(
      { config: 'Svc.store.enable' },
      'alerts: off: Svc.alerts.enable is true, but the alerts keep their state in the embedded store and Svc.store.enable is false',
    );
    return null;
  }
  const dependencies: ChannelDependencies = options.mqtt ? { mqtt: options.mqtt } : {};
  // Failed polls count from 0 for every server the pollers poll (as the metrics endpoint's do).
  const polls = new AlertPollSink(polledServers(config));
  const facts = new AlertFacts({ observed: options.observed, errors: ctx.errors, polls });
  const rules = ruleDefinitions(alerts);
  const engine = new AlertEngine({
    rules,
    channels: alerts.channels.map((channel) => buildChannel(channel, dependencies)),
    routes: alerts.routes,
    evaluationIntervalMs: parseDuration(alerts.evaluationInterval),
    groupWaitMs: parseDuration(alerts.groupWait),
    repeatIntervalMs: parseDuration(alerts.repeatInterval),
    externalUrl: externalUrlOf(config),
    openStore: () => openAlertStore(config.store.path),
    evaluator: (restored, startedAt) => new Evaluator(rules, restored, { startedAt }),
    facts: (at) => facts.at(at),
    log: logger,
    errors: ctx.errors,
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  options.observed.alerts = engine;
  return { engine, components: [engine], pollSink: polls };
}
