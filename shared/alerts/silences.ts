/**
 * A new silence from what an operator asked for, checked the same way for `svc alerts silence` and
 * `POST /api/v1/alerts/silences`: a known rule and/or labels, an end in the future (a time, or a
 * duration from now), and who and why. Also how alerts and silences are shown (the API's AlertView,
 * SilenceView), for `svc alerts list` and `GET /api/v1/alerts` alike.
 */
import { isRfc3339 } from '../audit/envelope.js';
import { closest } from '../config/closest.js';
import type { SvcConfig } from '../config/schema.js';
import type { AlertView, SilenceView } from '../store/api-types.js';
import { parseDuration } from '../util/duration.js';
import { type AlertRecord, type Silence, silenceMatches } from './model.js';
import { BUILT_IN_RULE_NAMES } from './rules/definitions.js';

/** What an operator asks for: the API's SilenceRequest, which the CLI's options fill too. */
export interface SilenceAsk {
  rule?: string | undefined;
  matchers?: Readonly<Record<string, string>> | undefined;
  /** RFC 3339. */
  endsAt?: string | undefined;
  /** `2h`, as the config writes durations. */
  duration?: string | undefined;
  createdBy?: string | undefined;
  comment?: string | undefined;
}

/** Why a silence cannot be made: the field at fault (the API's body member; the CLI maps it to its option). */
export interface SilenceProblem {
  field: 'rule' | 'matchers' | 'endsAt' | 'duration';
  message: string;
}

/** The rule names a silence may name: the built-in pack's and the configured rules', in that order. */
export function knownRuleNames(alerts: SvcConfig['alerts']): string[] {
  return [...new Set([...BUILT_IN_RULE_NAMES, ...alerts.rules.map((rule) => rule.name)])];
}

/** "unknown rule …": the known names, the closest first. */
function unknownRule(rule: string, known: readonly string[]): string {
  const near = closest(rule, known);
  const listed = near === undefined ? known : [near, ...known.filter((name) => name !== near)];
  return `unknown rule ${JSON.stringify(rule)}${near === undefined ? '' : ` (did you mean ${near}?)`}; the rules are ${listed.join(', ')}`;
}

/** The silence asked for, starting `now`, or the first problem of the ask; `knownRules`: knownRuleNames of the config. */
export function silenceFromAsk(
  ask: SilenceAsk,
  knownRules: readonly string[],
  now: number,
): { silence: Omit<Silence, 'id' | 'expiredAt'> } | { problem: SilenceProblem } {
  const matchers = ask.matchers ?? {};
  if (ask.rule === undefined && Object.keys(matchers).length === 0)
    return { problem: { field: 'rule', message: 'a silence needs a rule or at least one label to match' } };
  const emptyLabel = Object.keys(matchers).find((key) => key.trim() === '');
  if (emptyLabel !== undefined) return { problem: { field: 'matchers', message: 'a label name must not be empty' } };
  if (ask.rule !== undefined) {
    if (!knownRules.includes(ask.rule))
      return { problem: { field: 'rule', message: unknownRule(ask.rule, knownRules) } };
  }
  let endsAt: number;
  if (ask.endsAt !== undefined && ask.duration !== undefined)
    return { problem: { field: 'endsAt', message: 'give either an end time or a duration, not both' } };
  if (ask.endsAt !== undefined) {
    if (!isRfc3339(ask.endsAt))
      return {
        problem: {
          field: 'endsAt',
          message: `${JSON.stringify(ask.endsAt)} is not an RFC 3339 time such as 2026-11-22T18:00:00Z`,
        },
      };
    endsAt = Date.parse(ask.endsAt);
    if (endsAt <= now)
      return {
        problem: { field: 'endsAt', message: `${ask.endsAt} is not in the future: a silence must end later than now` },
      };
  } else if (ask.duration !== undefined) {
    let ms: number;
    try {
      ms = parseDuration(ask.duration);
    } catch (err) {
      return { problem: { field: 'duration', message: err instanceof Error ? err.message : String(err) } };
    }
    if (ms <= 0) return { problem: { field: 'duration', message: 'must be longer than 0' } };
    endsAt = now + ms;
  } else {
    return { problem: { field: 'endsAt', message: 'a silence needs an end: an end time or a duration' } };
  }
  return {
    silence: {
      rule: ask.rule ?? null,
      matchers: { ...matchers },
      startsAt: now,
      endsAt,
      createdBy: ask.createdBy ?? '',
      comment: ask.comment ?? '',
    },
  };
}

/** A stored silence as the API shows it, `active` as of `now`. */
export function silenceView(silence: Silence, now: number): SilenceView {
  return {
    ...silence,
    matchers: { ...silence.matchers },
    active: silence.expiredAt === null && silence.startsAt <= now && now < silence.endsAt,
  };
}

const SEVERITY_ORDER: Readonly<Record<AlertRecord['severity'], number>> = { critical: 0, warning: 1, info: 2 };

/**
 * The active alerts as shown: firing before pending, then the most severe, then the most recent
 * first; each with the first of `silences` that covers it (as of `now`), or null.
 */
export function alertViews(active: readonly AlertRecord[], silences: readonly Silence[], now: number): AlertView[] {
  return [...active]
    .sort(
      (a, b) =>
        Number(a.phase !== 'firing') - Number(b.phase !== 'firing') ||
        SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] ||
        b.activeSince - a.activeSince,
    )
    .map((alert) => ({
      fingerprint: alert.fingerprint,
      rule: alert.rule,
      severity: alert.severity,
      labels: { ...alert.labels },
      summary: alert.summary,
      link: alert.link,
      phase: alert.phase,
      activeSince: alert.activeSince,
      firedAt: alert.firedAt,
      value: alert.value,
      silencedBy: silences.find((silence) => silenceMatches(silence, alert.labels, now))?.id ?? null,
    }));
}
