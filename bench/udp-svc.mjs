/**
 * Svc's UDP path as the UDP benches load it (bench/udp.mjs, bench/udp-steps.mjs): the BUILT modules
 * from ../dist (bench/ is not part of the build), and the log-listener config both run on.
 */
const dist = new URL('../dist/', import.meta.url);
const load = (path) => import(new URL(path, dist).href);
const LOOPBACK = '127.0.0.1';

/** The modules of the UDP path, by the names the benches use. */
export async function loadSvc() {
  const [listener, handlers, counters, perf, appNames, lp, local, kernel, config, logger, messages, spool, compose, destinations] = await Promise.all([
    load('edge-agent/sources/udp/listener.js'),
    load('edge-agent/sources/udp/handlers.js'),
    load('edge-agent/sources/udp/counters.js'),
    load('edge-agent/sources/udp/rules/perf-filter.js'),
    load('shared/platform/app-names.js'),
    load('shared/destinations/tsdb/line-protocol.js'),
    load('shared/queue/local.js'),
    load('edge-agent/sources/udp/kernel-drops.js'),
    load('shared/config/load.js'),
    load('shared/logging/logger.js'),
    load('edge-agent/simulate/messages.js'),
    load('edge-agent/sources/udp/spool.js'),
    load('edge-agent/sources/udp/compose.js'),
    load('shared/destinations/registry.js'),
  ]);
  return {
    UdpListener: listener.UdpListener,
    logEventHandler: handlers.logEventHandler,
    EventCounter: counters.EventCounter,
    RejectedEventCounter: perf.RejectedEventCounter,
    NO_APP_NAMES: appNames.NO_APP_NAMES,
    PointClock: lp.PointClock,
    LocalEventQueue: local.LocalEventQueue,
    ProcNetUdpDrops: kernel.ProcNetUdpDrops,
    parseConfigText: config.parseConfigText,
    createLogger: logger.createLogger,
    createDatagramGenerator: messages.createDatagramGenerator,
    LOG_KINDS: messages.LOG_KINDS,
    EventSpool: spool.EventSpool,
    SPOOL_EVENTS: compose.SPOOL_EVENTS,
    EDGE_EVENTS_PER_MESSAGE: destinations.EDGE_EVENTS_PER_MESSAGE,
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
