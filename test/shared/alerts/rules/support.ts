/** Facts built in a test, the default alerts config, and an evaluator run over minutes of fake time. */

import type { AlertRecord, FactSample, Facts, RuleEvaluation, Transitions } from '../../../../shared/alerts/model.js';
import type { Evaluator } from '../../../../shared/alerts/rules/evaluator.js';
import { parseConfigText } from '../../../../shared/config/load.js';
import type { SvcConfig } from '../../../../shared/config/schema.js';

export const MINUTE = 60_000;
/** Every fixture time is relative to the run's now. */
export const T0 = Date.now();

/** Facts at `at`: per field, its samples. */
export function factsAt(at: number, fields: Record<string, FactSample[]>): Facts {
  return { at, samples: (field) => fields[field] ?? [] };
}

/** `Svc.alerts` of a config file with these lines below `alerts:` (none = the defaults). */
export function alertsConfig(...lines: string[]): SvcConfig['alerts'] {
  const alerts = lines.length > 0 ? ['  alerts:', ...lines.map((line) => `    ${line}`)] : [];
  const text = ['Svc:', ...alerts, '  store:', '    enable: true', ''];
  return parseConfigText(text.join('\n'), 'svc.yaml', {}).config.alerts;
}

/** What an evaluation at one minute gave. */
export interface Step {
  minute: number;
  transitions: Transitions;
  evaluations: RuleEvaluation[];
}

/** Evaluates at each minute from `from` to `to` (inclusive) over the facts `at(minute)` gives. */
export function run(
  evaluator: Evaluator,
  from: number,
  to: number,
  at: (minute: number) => Record<string, FactSample[]>,
): Step[] {
  const steps: Step[] = [];
  for (let minute = from; minute <= to; minute++) {
    const { transitions, evaluations } = evaluator.evaluate(factsAt(T0 + minute * MINUTE, at(minute)));
    steps.push({ minute, transitions, evaluations });
  }
  return steps;
}

/** The alerts of `rule` active after the evaluation at `minute`. */
export function activeAt(steps: readonly Step[], minute: number, rule: string): AlertRecord[] {
  const step = steps.find((s) => s.minute === minute);
  if (step === undefined) throw new Error(`no evaluation at minute ${minute}`);
  return step.transitions.active.filter((record) => record.rule === rule);
}

/** The labels events() leaves out: every alert of a rule has them. */
const RULE_LABELS = new Set(['alertname', 'severity', 'team']);

/** The minutes at which `rule` fired and resolved, each with the series' labels. */
export function events(steps: readonly Step[], rule: string): { fired: string[]; resolved: string[] } {
  const describe = (minute: number, record: AlertRecord) =>
    `${minute} ${Object.entries(record.labels)
      .filter(([name]) => !RULE_LABELS.has(name))
      .map(([name, value]) => `${name}=${value}`)
      .join(',')}`;
  return {
    fired: steps.flatMap((s) => s.transitions.fired.filter((r) => r.rule === rule).map((r) => describe(s.minute, r))),
    resolved: steps.flatMap((s) =>
      s.transitions.resolved.filter((r) => r.rule === rule).map((r) => describe(s.minute, r)),
    ),
  };
}

/** `values` of a promtool-like series at `minute`: the value of the last range that starts at or before it. */
export function piecewise(
  minute: number,
  ranges: readonly [from: number, value: (minute: number) => number][],
): number {
  let value = 0;
  for (const [from, at] of ranges) if (minute >= from) value = at(minute);
  return value;
}
