/** `localQueue`: the durable on-disk queue of local mode and of the edge agent. */
import { Int, Section, Str } from '../builders.js';

export const localQueue = Section('The durable on-disk event queue of local mode and of the edge agent', {
  directory: Str(
    './data/queue',
    'Directory of the queue journal and its dead-letter folders; relative paths resolve from the working directory',
    { minLength: 1 },
  ),
  maxReceiveCount: Int(5, 1, 100, 'Delivery attempts of a message before it moves to the dead-letter folder'),
  udpEventCapacity: Int(
    500_000,
    1000,
    100_000_000,
    "Events from the UDP listeners (and the edge's own counters) the queue under <directory>/platform holds undelivered before it refuses more; a refused event is counted as failed by its listener",
  ),
});
