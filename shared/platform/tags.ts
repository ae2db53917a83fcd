/**
 * Configured tag lists, and categories of log events (platform-formats.md §2.5), as the destinations
 * use them; and which built-in names of the tsdb's measurements a configured server tag must not take.
 */
import {
  HEALTH_MEASUREMENTS,
  type MeasurementModel,
  USER_SESSION_DETAILS,
  USER_SESSION_SUMMARY,
} from '../destinations/tsdb/datamodel.js';
import type { Category } from './events.js';

/** One `{name, value}` item of a configured tag list (§6.0 "Tag lists"). */
export interface TagItem {
  readonly name: string;
  readonly value: string;
}

/**
 * §2.5 step 5: categories as tsdb tags. A point cannot carry a tag twice, so for names given more
 * than once the first value wins (MQTT and `raw_event` keep the full list).
 */
export function firstValueTags(categories: readonly Category[]): Record<string, string> {
  const tags = new Map<string, string>();
  for (const { name, value } of categories) if (!tags.has(name)) tags.set(name, value);
  // fromEntries defines own data properties, so a name such as `__proto__` stays an ordinary key.
  return Object.fromEntries(tags);
}

/** The platform's measurements that carry a server's configured tags (platform-formats.md §6.1, §6.2). */
export const SERVER_TAG_MEASUREMENTS = {
  /** §6.1: every health poll of every listed server. */
  health: HEALTH_MEASUREMENTS,
  /** §6.2: the session polls of a server whose sessions are extracted. */
  sessions: [USER_SESSION_SUMMARY, USER_SESSION_DETAILS],
} as const satisfies Record<string, readonly MeasurementModel[]>;

/** A built-in tag or field that a configured tag of the same name would clash with. */
export interface BuiltInName {
  kind: 'tag' | 'field';
  /** The measurements that have it, in the data model's order. */
  measurements: string[];
  /** Their sections of platform-formats.md (`6.1`), each once. */
  sections: string[];
}

/**
 * What a configured tag called `name` would clash with in `measurements`: their built-in tags
 * (which it would replace, in every output) and their fields (a line cannot hold a name as both).
 * Empty when the name is free in all of them.
 */
export function builtInNamesLike(name: string, measurements: readonly MeasurementModel[]): BuiltInName[] {
  const found: BuiltInName[] = [];
  for (const kind of ['tag', 'field'] as const) {
    const having = measurements.filter((model) => Object.hasOwn(kind === 'tag' ? model.tags : model.fields, name));
    if (having.length === 0) continue;
    found.push({
      kind,
      measurements: having.map((model) => model.names[0]),
      sections: [...new Set(having.map((model) => model.section))],
    });
  }
  return found;
}
