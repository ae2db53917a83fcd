/** `userEvents`: user-activity events over UDP and where they are sent. */
import { Bool, Feature, Flag, List, Port, Secret, Section, Str, StringList, Tags, UserRef } from '../builders.js';
import { UdpServerConfig } from './udp-listener.js';

/** One MQTT topic of a user event kind, switched on by itself. */
const topic = (def: string, what: string) =>
  Feature(what, false, `Publish ${what.toLowerCase()}`, { topic: Str(def, 'Topic', { minLength: 1 }) });

export const userEvents = Feature(
  'User-activity events over UDP (session start/stop, connection open/close)',
  false,
  'Track user events',
  {
    excludeUser: List(UserRef, 'Users to ignore; items are {directory, userId}, compared case-insensitively', [
      { directory: 'INTERNAL', userId: 'sa_scheduler' },
    ]),
    udpServerConfig: UdpServerConfig(
      { portUserActivityEvents: Port(9997, 'UDP port for user-activity events; must match the log appender') },
      'user_events_queue',
    ),
    tags: Tags('Tags added to each user event'),
    sendToMQTT: Feature(
      'Publish user events to MQTT (needs Svc.mqttConfig.enable)',
      false,
      'Send user events to MQTT',
      {
        postTo: Section('Topics', {
          everythingTopic: topic('svc/userevent', 'All user events'),
          sessionStartTopic: topic('svc/userevent/session/start', 'Session start messages'),
          sessionStopTopic: topic('svc/userevent/session/stop', 'Session stop messages'),
          connectionOpenTopic: topic('svc/userevent/connection/open', 'Connection open messages'),
          connectionCloseTopic: topic('svc/userevent/connection/close', 'Connection close messages'),
        }),
      },
    ),
    sendToTsdb: Flag(false, 'Save user events in the tsdb (needs Svc.tsdbConfig.enable)'),
    sendToMonSaas: Feature(
      'Send user events to the monitoring SaaS (needs Svc.monsaas.enable)',
      false,
      'Send user events to the monitoring SaaS',
      {
        destinationAccount: StringList('Account names (Svc.thirdPartyToolsCredentials.monsaas[].accountName)', ['ops']),
        scramble: Bool(false, 'Replace user directory and user id by keyed hashes before sending'),
        scrambleSecret: Secret(
          'Key of the scrambling hash, at least 16 characters; empty = a random key per start (pseudonyms then change at every restart)',
          { pattern: '^(|.{16,})$', 'x-expect': 'empty or at least 16 characters' },
        ),
      },
    ),
  },
);
