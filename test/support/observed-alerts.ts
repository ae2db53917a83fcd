/**
 * An ObservedAlerts for web view tests before (or without) the alert engine: the real alerts' store
 * of a store file, the rules and channels read from the config, and the active alerts as the store
 * holds them. A stand-in for the engine (edge-agent/alerts/), which is not the code under test where
 * this is used: the tests exercise the read API and the store.
 */
import type { ObservedAlerts } from '../../edge-agent/endpoints/observed.js';
import type { AlertStore } from '../../shared/alerts/model.js';
import type { SvcConfig } from '../../shared/config/schema.js';
import type { RuleView } from '../../shared/store/api-types.js';
import { parseDuration } from '../../shared/util/duration.js';

/** The engine's face to the web view, made of `store` and the config's alerts section. */
export function observedAlertsOf(store: AlertStore, alerts: SvcConfig['alerts']): ObservedAlerts {
  return {
    store,
    evaluationIntervalMs: parseDuration(alerts.evaluationInterval),
    rules: (): RuleView[] => [
      ...Object.entries(alerts.builtIn)
        .filter(([, rule]) => rule.enable)
        .map(
          ([name, rule]): RuleView => ({
            id: name,
            name,
            builtIn: true,
            severity: 'warning',
            text: name,
            forMs: parseDuration(rule.for),
            lastEvaluation: null,
          }),
        ),
      ...alerts.rules.map(
        (rule): RuleView => ({
          id: rule.name,
          name: rule.name,
          builtIn: false,
          severity: rule.severity,
          text: rule.expr.field,
          forMs: parseDuration(rule.for),
          lastEvaluation: null,
        }),
      ),
    ],
    // The target unmasked on purpose: the API must mask it whatever the engine hands it.
    channels: () =>
      alerts.channels.map((channel) => ({
        name: channel.name,
        type: channel.type,
        target: channel.url,
        sent: 0,
        failed: 0,
        lastError: null,
        failing: false,
      })),
    active: () => store.loadActive(),
  };
}
