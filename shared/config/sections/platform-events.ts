/** `platformEvents`: the counters of user and log events (and of rejected ones) the UDP listeners keep. */
import { Feature, Millis, Section, Str, Tags } from '../builders.js';

export const platformEvents = Section('Counters of user and log events', {
  tsdb: Feature('Store the counters in the tsdb', false, 'Store counters of user/log events and rejected events', {
    writeFrequency: Millis(20_000, 1000, 'Time between counter writes'),
  }),
  eventCount: Feature('Event count', false, 'Store the event count', {
    tsdb: Section('tsdb', {
      measurementName: Str('event_count', 'Measurement for the event count', { minLength: 1 }),
      tags: Tags('Tags added before storing'),
    }),
  }),
  rejectedEventCount: Feature('Rejected-event count', false, 'Count and store rejected events', {
    tsdb: Section('tsdb', {
      measurementName: Str('rejected_event_count', 'Measurement for the rejected count', { minLength: 1 }),
    }),
  }),
});
