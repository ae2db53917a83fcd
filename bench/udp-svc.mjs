/**
 * Svc's UDP path as the UDP benches load it (bench/udp.mjs, bench/udp-steps.mjs): the BUILT modules
 * from ../dist (bench/ is not part of the build), and the log-listener config both run on.
 */
const dist = new URL('../dist/', import.meta.url);
const load = (path) => import(new URL(path, dist).href);
const LOOPBACK = '127.0.0.1';

/** The modules of the UDP path, by the names the benches use. */
export async function loadSvc() {
  const [
    listener,
    handlers,
    counters,
    perf,
    appNames,
    pointClock,
    local,
    kernel,
    config,
    logger,
    messages,
    batcher,
    compose,
    destinations,
    codec,
    store,
    writerHandler,
    logLevels,
  ] = await Promise.all([
    load('edge-agent/sources/udp/listener.js'),
    load('edge-agent/sources/udp/handlers.js'),
    load('edge-agent/sources/udp/counters.js'),
    load('edge-agent/sources/udp/rules/perf-filter.js'),
    load('shared/platform/app-names.js'),
    load('shared/queue/point-clock.js'),
    load('shared/queue/local/index.js'),
    load('edge-agent/sources/udp/kernel-drops.js'),
    load('shared/config/load.js'),
    load('shared/logging/logger.js'),
    load('edge-agent/simulate/messages.js'),
    load('edge-agent/sources/common/batcher.js'),
    load('edge-agent/sources/udp/compose.js'),
    load('shared/destinations/registry.js'),
    load('shared/queue/codec.js'),
    load('shared/destinations/store/build.js'),
    load('shared/destinations/handler.js'),
    load('edge-agent/sources/udp/log-levels.js'),
  ]);
  return {
    UdpListener: listener.UdpListener,
    logEventHandler: handlers.logEventHandler,
    EventCounter: counters.EventCounter,
    RejectedEventCounter: perf.RejectedEventCounter,
    NO_APP_NAMES: appNames.NO_APP_NAMES,
    PointClock: pointClock.PointClock,
    LocalEventQueue: local.LocalEventQueue,
    ProcNetUdpDrops: kernel.ProcNetUdpDrops,
    socketRows: kernel.socketRows,
    parseConfigText: config.parseConfigText,
    createLogger: logger.createLogger,
    createDatagramGenerator: messages.createDatagramGenerator,
    LOG_KINDS: messages.LOG_KINDS,
    EventBatcher: batcher.EventBatcher,
    BATCHER_EVENTS: compose.BATCHER_EVENTS,
    BATCHER_GATHER_MS: compose.BATCHER_GATHER_MS,
    EDGE_EVENTS_PER_MESSAGE: destinations.EDGE_EVENTS_PER_MESSAGE,
    decodeRecord: codec.decodeRecord,
    StoreComponent: store.StoreComponent,
    makeWriterHandler: writerHandler.makeWriterHandler,
    LogLevelCounts: logLevels.LogLevelCounts,
  };
}

/** The log listener on loopback, every log source and the engine performance monitor on. */
export function benchConfig(svc, maxSize, maxConcurrent) {
  const yaml = [
    'Svc:',
    '  logEvents:',
    '    udpServerConfig:',
    `      serverHost: ${LOOPBACK}`,
    '      messageQueue:',
    `        maxSize: ${maxSize}`,
    `        maxConcurrent: ${maxConcurrent}`,
    '    source:',
    '      engine: { enable: true }',
    '      proxy: { enable: true }',
    '      repository: { enable: true }',
    '      scheduler: { enable: true }',
    '      apiPerf: { enable: true }',
    '    enginePerformanceMonitor:',
    '      enable: true',
    '      monitorFilter:',
    '        allApps:',
    '          enable: true',
  ].join('\n');
  return svc.parseConfigText(`${yaml}\n`, 'bench.yaml', {}).config;
}

const EVENT_OPENING = '{"kind":"';

/** Events in a packed queue message body. */
function countEvents(body) {
  let n = 0;
  for (let i = body.indexOf(EVENT_OPENING); i !== -1; i = body.indexOf(EVENT_OPENING, i + EVENT_OPENING.length)) n++;
  return n;
}

/**
 * The consumer group both UDP benches give the queue: what a destination that writes nothing would
 * cost: take the batch, count its events, acknowledge it. Events, not messages (the batcher packs
 * several in one message): counted by their `{"kind":"`, which opens every packed event and cannot
 * occur inside a JSON string (its `"` are escaped). A JSON.parse of every body here cost ≈ 2.5 µs per
 * datagram and its garbage, in the bench's process.
 */
export function countingGroup() {
  return benchGroup('bench', (record) => countEvents(record.body));
}

/**
 * A consumer group of the benches' batching that counts what `eventsOf` says each record holds
 * (given the record and the events handed off with it), and acknowledges every batch.
 */
function benchGroup(name, eventsOf) {
  let consumed = 0;
  return {
    group: {
      name,
      batchSize: 1000,
      batchWindowMs: 100,
      handler: async (event) => {
        const records = event.Records;
        for (let index = 0; index < records.length; index++)
          consumed += eventsOf(records[index], event.handedOff[index]);
        return { batchItemFailures: [] };
      },
    },
    consumed: () => consumed,
  };
}

/**
 * bench:udp's `--store`: the embedded store's consumer group as `svc local` composes it (its real
 * StoreComponent with its worker thread, destination and writer handler, the store's batching) writing `storeFile`,
 * counting the events of every message it acknowledged; `thread` false: the writer on the main
 * thread, in slices, as in the single executable. `close()` closes the database.
 */
export async function storeGroup(svc, config, storeFile, log, thread = true) {
  const ctx = {
    config: { ...config, store: { ...config.store, path: storeFile } },
    logger: log,
    errors: { track: () => undefined },
    clock: new svc.PointClock(),
  };
  const store = new svc.StoreComponent(ctx, Date.now, thread);
  await store.open();
  const { destination, batchSize, batchWindowMs, maxBatchEvents } = store.destination();
  const handler = svc.makeWriterHandler({ destination, claimCheck: null, log });
  let consumed = 0;
  return {
    group: {
      name: 'store',
      batchSize,
      batchWindowMs,
      maxBatchEvents,
      handler: async (event) => {
        const result = await handler(event);
        const failed = new Set(result.batchItemFailures.map((f) => f.itemIdentifier));
        for (const record of event.Records) if (!failed.has(record.messageId)) consumed += countEvents(record.body);
        return result;
      },
    },
    consumed: () => consumed,
    close: () => store.stop(),
  };
}

/**
 * A consumer group that decodes every message as the platform pipeline's writers do before they
 * write (destinations/handler.ts: `decodeRecord`, the body parsed and every event validated, unless
 * the queue handed the events off in memory), then acknowledges it: what the real consumers cost
 * before their destination's own work. bench:udp-steps' "consumer decoding" step.
 */
export function decodingGroup(svc) {
  return benchGroup('bench-decoding', (record, handedOff) => {
    const decoded = svc.decodeRecord(record, handedOff);
    if (!decoded.ok || !('events' in decoded.message))
      throw new Error(`undecodable message ${record.messageId}: ${decoded.ok ? 'a claim check' : decoded.error}`);
    return decoded.message.events.length;
  });
}
