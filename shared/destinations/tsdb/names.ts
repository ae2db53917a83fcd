/**
 * The built-in tag and field names of `user_events` and `log_event` (from the data model), without
 * the mappers: the config rules check configured tag and category names against them, and every
 * bundle loads the rules.
 */
import { LOG_EVENT, tagNames, USER_EVENTS } from './datamodel.js';

export const USER_EVENTS_MEASUREMENT = USER_EVENTS.names[0];
export const LOG_EVENT_MEASUREMENT = LOG_EVENT.names[0];

type UserEventsTag = keyof typeof USER_EVENTS.tags;
type LogEventTag = keyof typeof LOG_EVENT.tags;

/** §6.3: every tag name `user_events` may carry before the configured ones (from the data model). */
export const USER_EVENTS_TAGS: readonly UserEventsTag[] = tagNames(USER_EVENTS);
/** §6.3: every field name of `user_events`. */
export const USER_EVENTS_FIELDS: readonly string[] = Object.keys(USER_EVENTS.fields);

/** §6.4: "Tag names used anywhere in `log_event`". */
export const LOG_EVENT_TAGS: readonly LogEventTag[] = tagNames(LOG_EVENT);
/** §6.4: every field name of `log_event`, over all sources. */
export const LOG_EVENT_FIELDS: readonly string[] = Object.keys(LOG_EVENT.fields);

/**
 * Built-in tag and field names per measurement: a configured tag or category name must not be one of
 * them (§6.0 last row, checked at startup).
 */
export const BUILT_IN_POINT_NAMES: Readonly<
  Record<typeof USER_EVENTS_MEASUREMENT | typeof LOG_EVENT_MEASUREMENT, ReadonlySet<string>>
> = {
  [USER_EVENTS_MEASUREMENT]: new Set<string>([...USER_EVENTS_TAGS, ...USER_EVENTS_FIELDS]),
  [LOG_EVENT_MEASUREMENT]: new Set<string>([...LOG_EVENT_TAGS, ...LOG_EVENT_FIELDS]),
};
