/**
 * The dispatcher: after each evaluation it decides what each channel is told, and sends it in the
 * background (docs/alerts.md "Notifications", "Routes").
 *
 * - Routes: an alert goes to the channels of every route whose `match` it matches, grouped by that
 *   route's `groupBy`; an alert no route matches goes to every channel. A channel listed by several
 *   matching routes takes the grouping of the first.
 * - A group's notification carries every alert of the group firing now and those the channel was
 *   told fired and that have resolved since. It is due when a firing alert the channel was not told
 *   of fired `groupWait` ago or more, when an alert it was told of resolved (at once), or when the
 *   group was last told `repeatInterval` ago or more.
 * - What each channel was told is the store's deliveries, so a restart sends nothing twice and sends
 *   what a crash left untold. A resolution still to tell is saved too (`alert_resolved`), so a restart
 *   while a channel fails still tells it; one that comes while the send telling the alert fires is
 *   in flight is told once that send went through. Silenced alerts are neither sent nor repeated; once the silence ends
 *   the alert counts as not told, so the channel hears of it as of a new one.
 * - A send runs in the background (an evaluation never waits for a channel), one at a time per
 *   channel and group. A failed one (RetryingChannel already retried, tracked and logged) is tried
 *   again at the first evaluation one minute later, then two, four … at most `repeatInterval`.
 */
import type { ChannelView } from '../store/api-types.js';
import { formatDuration } from '../util/duration.js';
import type { RetryingChannel } from './channels/retry.js';
import type { AlertRecord, AlertStore, Delivery, HistoryEntry, ResolvedAlert, Silence } from './model.js';
import { silenceMatches } from './model.js';
import { type AlertInstance, groupKeyOf, makeNotification } from './notification.js';

/** A route of `Svc.alerts.routes[]`. */
export interface Route {
  match: Readonly<Record<string, string>>;
  channels: readonly string[];
  groupBy: readonly string[];
}

/** The grouping of an alert that no route matches, and of a route whose `groupBy` is empty. */
export const DEFAULT_GROUP_BY: readonly string[] = ['alertname', 'server'];
/** The first wait before a failed group is tried again; it doubles up to the repeat interval. */
export const RETRY_AFTER_FAILURE_MS = 60_000;
/** The most alerts one notification lists (the others are counted in `truncatedAlerts`). */
const MAX_ALERTS_PER_NOTIFICATION = 50;

/** What the dispatcher needs; durations in ms. */
export interface DispatcherOptions {
  channels: readonly RetryingChannel[];
  routes: readonly Route[];
  groupWaitMs: number;
  repeatIntervalMs: number;
  /** The base URL of Svc's pages, put before each alert's link. */
  externalUrl: string;
  store: AlertStore;
  /** Called with a store failure once a send completed (the engine logs and tracks it). */
  onStoreError: (err: unknown) => void;
}

/** What one channel has done since start, for the metrics and the Alerts page: the API's ChannelView (api-types.ts, one description of each field). */
export type ChannelCounters = ChannelView;

/** What one evaluation hands the dispatcher. */
export interface DispatchInput {
  at: number;
  /** Every alert pending or firing now (only firing ones are sent). */
  active: readonly AlertRecord[];
  /** Alerts that resolved at this evaluation. */
  resolved: readonly AlertRecord[];
  /** The store's active silences. */
  silences: readonly Silence[];
}

interface GroupState {
  inFlight: boolean;
  failures: number;
  /** No new try before this time after a failure. */
  retryAt: number;
}

/** An alert of one channel's group, as it will be told. */
interface Member {
  record: AlertRecord;
  status: 'firing' | 'resolved';
  /** When it resolved (resolved members). */
  endsAt?: number;
}

/** The counters of a channel that has sent nothing yet. */
export function unusedCounters(channel: RetryingChannel['channel']): ChannelCounters {
  return {
    name: channel.name,
    type: channel.type,
    target: channel.target,
    sent: 0,
    failed: 0,
    lastError: null,
    failing: false,
  };
}

/** Whether an alert's labels satisfy a route's match (a value may list alternatives `a|b`). */
export function routeMatches(
  match: Readonly<Record<string, string>>,
  labels: Readonly<Record<string, string>>,
): boolean {
  return Object.entries(match).every(([key, values]) => {
    const value = labels[key];
    return value !== undefined && values.split('|').includes(value);
  });
}

/** The group labels of an alert: the values it has of the `groupBy` labels. */
function groupLabelsOf(labels: Readonly<Record<string, string>>, groupBy: readonly string[]): Record<string, string> {
  const by = groupBy.length === 0 ? DEFAULT_GROUP_BY : groupBy;
  return Object.fromEntries(by.flatMap((key) => (labels[key] === undefined ? [] : [[key, labels[key]]])));
}

/** Decides and sends the notifications; see the module comment. */
export class Dispatcher {
  /** channel → fingerprint → what it was last told. */
  private readonly told = new Map<string, Map<string, Delivery>>();
  /** channel → fingerprint → an alert it was told fired that has resolved and is not yet told so. */
  private readonly resolvedToTell = new Map<string, Map<string, { record: AlertRecord; at: number }>>();
  /** `channel \0 fingerprint` of the alerts a send in flight tells the channel fire (a group has one send at a time, an alert one group per channel). */
  private readonly firingInFlight = new Set<string>();
  /** `channel \0 fingerprint` → an alert that resolved while a send telling the channel it fires was in flight. */
  private readonly resolvedDuringSend = new Map<string, { record: AlertRecord; at: number }>();
  /** `channel \0 groupKey` → its sends. */
  private readonly groups = new Map<string, GroupState>();
  private readonly counters = new Map<string, ChannelCounters>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: DispatcherOptions) {
    for (const { channel } of options.channels) {
      this.told.set(channel.name, new Map());
      this.resolvedToTell.set(channel.name, new Map());
      this.counters.set(channel.name, unusedCounters(channel));
    }
    for (const delivery of options.store.deliveries())
      this.told.get(delivery.channel)?.set(delivery.fingerprint, delivery);
    // Resolutions the last process had not told yet (a channel failing, a stop): told as if just resolved.
    for (const { record, resolvedAt } of options.store.untoldResolutions())
      for (const [channel, told] of this.told)
        if (told.get(record.fingerprint)?.status === 'firing')
          this.resolvedToTell.get(channel)?.set(record.fingerprint, { record, at: resolvedAt });
  }

  /** Each channel's counters since start, every channel from the start. */
  channelCounters(): ChannelCounters[] {
    return [...this.counters.values()].map((counters) => ({ ...counters }));
  }

  /** Sends what is due after an evaluation; returns at once, the sends go on in the background. */
  dispatch(input: DispatchInput): void {
    const { at } = input;
    const firing = input.active.filter((record) => record.phase === 'firing');
    const silenced = (record: AlertRecord) =>
      input.silences.some((silence) => silenceMatches(silence, record.labels, at));
    const queued = new Map<string, ResolvedAlert>();
    for (const { channel } of this.options.channels) {
      const told = this.told.get(channel.name) ?? new Map<string, Delivery>();
      const toTell = this.resolvedToTell.get(channel.name) ?? new Map<string, { record: AlertRecord; at: number }>();
      for (const record of input.resolved) {
        const key = `${channel.name}\0${record.fingerprint}`;
        if (told.get(record.fingerprint)?.status === 'firing') {
          toTell.set(record.fingerprint, { record, at });
          queued.set(record.fingerprint, { record, resolvedAt: at });
        } else if (this.firingInFlight.has(key)) this.resolvedDuringSend.set(key, { record, at });
      }
      // A silenced alert counts as not told: when the silence ends it is told as a new one.
      for (const record of firing) if (silenced(record)) told.delete(record.fingerprint);
      for (const { record } of toTell.values()) if (silenced(record)) toTell.delete(record.fingerprint);
    }
    const groups = new Map<
      string,
      { channel: RetryingChannel; groupLabels: Record<string, string>; members: Member[] }
    >();
    const add = (record: AlertRecord, member: Member, onlyChannel?: string) => {
      for (const { channel, groupBy } of this.channelsOf(record)) {
        if (onlyChannel !== undefined && channel.channel.name !== onlyChannel) continue;
        const groupLabels = groupLabelsOf(record.labels, groupBy);
        const key = `${channel.channel.name}\0${groupKeyOf(groupLabels)}`;
        const group = groups.get(key) ?? { channel, groupLabels, members: [] };
        group.members.push(member);
        groups.set(key, group);
      }
    };
    for (const record of firing) if (!silenced(record)) add(record, { record, status: 'firing' });
    for (const [channelName, toTell] of this.resolvedToTell)
      for (const { record, at: resolvedAt } of toTell.values())
        add(record, { record, status: 'resolved', endsAt: resolvedAt }, channelName);
    this.saveResolutions([...queued.values()]);
    for (const [key, group] of groups)
      if (this.isDue(key, group.channel.channel.name, group.members, at)) this.send(key, group, at);
  }

  /** Saves resolutions still to be told, so that a restart tells them; a store failure goes to onStoreError. */
  private saveResolutions(resolved: readonly ResolvedAlert[]): void {
    try {
      this.options.store.saveResolutions(resolved);
    } catch (err) {
      this.options.onStoreError(err);
    }
  }

  /** Resolves once every send in flight has completed, or after `timeoutMs`. */
  async idle(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const drained = (async () => {
      while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
      return true;
    })();
    try {
      return await Promise.race([drained, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The channels an alert goes to, each with the grouping of the first route that sends it there. */
  private channelsOf(record: AlertRecord): { channel: RetryingChannel; groupBy: readonly string[] }[] {
    const { channels, routes } = this.options;
    const matching = routes.filter((route) => routeMatches(route.match, record.labels));
    if (matching.length === 0) return channels.map((channel) => ({ channel, groupBy: DEFAULT_GROUP_BY }));
    return channels.flatMap((channel) => {
      const route = matching.find((candidate) => candidate.channels.includes(channel.channel.name));
      return route === undefined ? [] : [{ channel, groupBy: route.groupBy }];
    });
  }

  private isDue(key: string, channelName: string, members: readonly Member[], at: number): boolean {
    const state = this.groups.get(key);
    if (state?.inFlight || (state !== undefined && at < state.retryAt)) return false;
    if (members.some((member) => member.status === 'resolved')) return true;
    const told = this.told.get(channelName);
    let lastTold = Number.NEGATIVE_INFINITY;
    for (const { record } of members) {
      const delivery = told?.get(record.fingerprint);
      if (delivery?.status !== 'firing') {
        if (at - (record.firedAt ?? record.activeSince) >= this.options.groupWaitMs) return true;
      } else lastTold = Math.max(lastTold, delivery.sentAt);
    }
    // Nothing told yet (every alert still within groupWait): nothing to repeat.
    return lastTold !== Number.NEGATIVE_INFINITY && at - lastTold >= this.options.repeatIntervalMs;
  }

  private send(
    key: string,
    group: { channel: RetryingChannel; groupLabels: Record<string, string>; members: Member[] },
    at: number,
  ): void {
    const { channel, groupLabels, members } = group;
    const state = this.groups.get(key) ?? { inFlight: false, failures: 0, retryAt: 0 };
    state.inFlight = true;
    this.groups.set(key, state);
    const firingKeys = members
      .filter((member) => member.status === 'firing')
      .map(({ record }) => `${channel.channel.name}\0${record.fingerprint}`);
    for (const firingKey of firingKeys) this.firingInFlight.add(firingKey);
    const notification = makeNotification({
      receiver: channel.channel.name,
      groupLabels,
      externalURL: this.options.externalUrl,
      alerts: members.map((member) => this.instanceOf(member)),
      maxAlerts: MAX_ALERTS_PER_NOTIFICATION,
    });
    const sending = channel
      .deliver(notification)
      .then((outcome) => {
        if (!outcome.delivered) {
          this.failed(channel.channel.name, members, at, state, outcome.error ?? 'not delivered');
          return;
        }
        this.delivered(channel.channel.name, members, at, state);
        // A group told only of resolutions is done: its state goes, so memory holds only live groups.
        if (members.every((member) => member.status === 'resolved')) this.groups.delete(key);
      })
      .catch((err: unknown) => this.options.onStoreError(err))
      .finally(() => {
        state.inFlight = false;
        this.inFlight.delete(sending);
        for (const firingKey of firingKeys) {
          this.firingInFlight.delete(firingKey);
          // Left only when the send failed: not told it fires, the channel has no resolution to hear.
          this.resolvedDuringSend.delete(firingKey);
        }
      });
    this.inFlight.add(sending);
  }

  private delivered(channelName: string, members: readonly Member[], at: number, state: GroupState): void {
    state.failures = 0;
    state.retryAt = 0;
    const counters = this.counters.get(channelName);
    if (counters) {
      counters.sent += 1;
      counters.failing = false;
    }
    const deliveries: Delivery[] = members.map(({ record, status }) => ({
      fingerprint: record.fingerprint,
      channel: channelName,
      status,
      sentAt: at,
    }));
    const told = this.told.get(channelName);
    const toTell = this.resolvedToTell.get(channelName);
    const resolvedMeanwhile: ResolvedAlert[] = [];
    for (const delivery of deliveries) {
      if (delivery.status === 'firing') {
        told?.set(delivery.fingerprint, delivery);
        // It resolved while this send was in flight: the channel is now told so too.
        const key = `${channelName}\0${delivery.fingerprint}`;
        const resolved = this.resolvedDuringSend.get(key);
        if (resolved !== undefined) {
          this.resolvedDuringSend.delete(key);
          toTell?.set(delivery.fingerprint, resolved);
          resolvedMeanwhile.push({ record: resolved.record, resolvedAt: resolved.at });
        }
      } else {
        told?.delete(delivery.fingerprint);
        toTell?.delete(delivery.fingerprint);
      }
    }
    this.options.store.setDeliveries(deliveries);
    this.options.store.saveResolutions(resolvedMeanwhile);
    this.options.store.record(members.map((member) => historyOf(member, channelName, 'notified', member.status, at)));
  }

  private failed(channelName: string, members: readonly Member[], at: number, state: GroupState, error: string): void {
    state.failures += 1;
    const waitMs = Math.min(RETRY_AFTER_FAILURE_MS * 2 ** (state.failures - 1), this.options.repeatIntervalMs);
    state.retryAt = at + waitMs;
    const counters = this.counters.get(channelName);
    if (counters) {
      counters.failed += 1;
      counters.lastError = error;
      counters.failing = true;
    }
    const detail = `${error}; tried again in ${formatDuration(waitMs)} or later`;
    this.options.store.record(members.map((member) => historyOf(member, channelName, 'notify_failed', detail, at)));
  }

  private instanceOf(member: Member): AlertInstance {
    const { record } = member;
    return {
      ruleName: record.rule,
      severity: record.severity,
      labels: { ...record.labels },
      annotations: { summary: record.summary },
      status: member.status,
      startsAt: new Date(record.firedAt ?? record.activeSince),
      ...(member.endsAt === undefined ? {} : { endsAt: new Date(member.endsAt) }),
      value: record.value,
      fingerprint: record.fingerprint,
      link: `${this.options.externalUrl.replace(/\/+$/, '')}${record.link}`,
    };
  }
}

function historyOf(
  member: Member,
  channel: string,
  event: 'notified' | 'notify_failed',
  detail: string,
  at: number,
): Omit<HistoryEntry, 'id'> {
  const { record } = member;
  return {
    at,
    fingerprint: record.fingerprint,
    rule: record.rule,
    severity: record.severity,
    labels: record.labels,
    event,
    value: record.value,
    channel,
    detail,
  };
}
