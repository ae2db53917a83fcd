/**
 * Categorisation of log events by rules (platform-formats.md §2.5, `Svc.logEvents.categorise`).
 * Pure: no I/O, the only side effect is the optional `warn` callback for unknown filter types.
 */
import type { SvcConfig } from '../../../../shared/config/schema.js';
import type { Category } from '../../../../shared/platform/events.js';
import { firstValueTags } from '../../../../shared/platform/tags.js';

export type CategoriseSettings = SvcConfig['logEvents']['categorise'];
export type CategoriseRule = CategoriseSettings['rules'][number];
export type CategoriseFilter = CategoriseRule['filter'][number];

export type { Category };
export { firstValueTags };

export type CategoriseResult = { action: 'drop' } | { action: 'keep'; categories: Category[] };

/** The filter types §2.5 defines; anything else is unknown (WARN, never matches). */
export const FILTER_TYPES = ['sw', 'ew', 'so'] as const;
export type FilterType = (typeof FILTER_TYPES)[number];

function isFilterType(type: string): type is FilterType {
  return (FILTER_TYPES as readonly string[]).includes(type);
}

/** The WARN text for an unknown filter type; it depends on the type only, so `onceEach` dedupes per type. */
export function unknownFilterTypeMessage(type: string): string {
  return `logEvents.categorise: unknown filter type ${JSON.stringify(type)} (expected one of ${FILTER_TYPES.join(', ')}); the filter never matches`;
}

/**
 * Wraps a warn callback so that each distinct message is passed on once: give the wrapped function
 * to every `categorise` call to get one WARN per unknown filter type for the process lifetime.
 */
export function onceEach(warn: (msg: string) => void): (msg: string) => void {
  const seen = new Set<string>();
  return (msg) => {
    if (seen.has(msg)) return;
    seen.add(msg);
    warn(msg);
  };
}

/** Level test: the event level equals one of `logLevel`, case-insensitively (`fatal` is a level like any other). */
function levelMatches(level: string, levels: readonly string[]): boolean {
  const wanted = level.toLowerCase();
  return levels.some((l) => l.toLowerCase() === wanted);
}

/** Filter test, case-sensitive. An unknown type warns (once per type within one call) and does not match. */
function filterMatches(filter: CategoriseFilter, message: string, warnType: (type: string) => void): boolean {
  if (!isFilterType(filter.type)) {
    warnType(filter.type);
    return false;
  }
  switch (filter.type) {
    case 'sw':
      return message.startsWith(filter.value);
    case 'ew':
      return message.endsWith(filter.value);
    case 'so':
      return message.includes(filter.value);
  }
}

/** Appends `items` to `into` unless an equal `{name, value}` is already there; copies the items. */
function addUnique(into: Category[], seen: Set<string>, items: readonly Category[]): void {
  for (const { name, value } of items) {
    const key = JSON.stringify([name, value]);
    if (seen.has(key)) continue;
    seen.add(key);
    into.push({ name, value });
  }
}

/**
 * §2.5: rules in order; a rule applies when the level is one of its `logLevel` (case-insensitive) and
 * one of its filters matches the message (case-sensitive). A `drop` rule that applies drops at once;
 * `categorise` rules accumulate their categories, duplicates (same name and value) removed, first
 * occurrence kept in place. When no rule applied and `ruleDefault.enable`, the default categories are
 * used (also de-duplicated). With `enable` false the event is kept without categories.
 *
 * A `categorise` rule with an empty `category[]` that applies still counts as "matched": the default
 * rule is then not used.
 */
export function categorise(
  event: { level: string; message: string },
  settings: CategoriseSettings,
  warn?: (msg: string) => void,
): CategoriseResult {
  if (!settings.enable) return { action: 'keep', categories: [] };

  const warned = new Set<string>();
  const warnType = (type: string): void => {
    if (warned.has(type)) return;
    warned.add(type);
    warn?.(unknownFilterTypeMessage(type));
  };

  const categories: Category[] = [];
  const seen = new Set<string>();
  let matched = false;
  for (const rule of settings.rules) {
    if (!levelMatches(event.level, rule.logLevel)) continue;
    if (!rule.filter.some((f) => filterMatches(f, event.message, warnType))) continue;
    if (rule.action === 'drop') return { action: 'drop' };
    matched = true;
    addUnique(categories, seen, rule.category);
  }
  if (!matched && settings.ruleDefault.enable) addUnique(categories, seen, settings.ruleDefault.category);
  return { action: 'keep', categories };
}
