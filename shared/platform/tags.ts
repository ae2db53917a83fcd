/** Configured tag lists, and categories of log events (platform-formats.md §2.5), as the destinations use them. */
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
