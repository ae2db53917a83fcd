/**
 * The settings of one notification channel: an item of `Svc.alerts.channels[]`, typed by the config
 * schema itself (`AlertChannel` in shared/config/sections/alerts.ts), the one source of truth. `type`
 * says which members are used (`url` for the HTTP kinds, `email`, `topic`); the config's cross-field
 * rules refuse a channel missing what its type needs. The URL and the SMTP password are marked
 * `x-secret` there, so they are redacted in logs, crash dumps and the config view.
 */
import type { Static } from '@sinclair/typebox';
import type { AlertChannel } from '../config/sections/alerts.js';

/** One channel's settings, as the loaded config holds them. */
export type ChannelSettings = Static<typeof AlertChannel>;
/** The e-mail settings of a channel (its `email` member): the SMTP server and the addresses. */
export type EmailSettings = ChannelSettings['email'];
