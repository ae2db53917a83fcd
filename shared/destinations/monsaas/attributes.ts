/**
 * The built-in attribute names of monsaas events (§8.3), without the mappers: the config rules check
 * configured attribute names against them, and every bundle loads the rules, so this module is all
 * of monsaas that a bundle without the monsaas destination holds.
 */
/** §8.3 user event: every built-in attribute name, in payload order. */
export const MONSAAS_USER_EVENT_ATTRIBUTES = [
  'eventType',
  'timestamp',
  'qs_host',
  'qs_event_action',
  'qs_userFull',
  'qs_userDirectory',
  'qs_userId',
  'qs_origin',
  'qs_appId',
  'qs_appName',
  'qs_uaBrowserName',
  'qs_uaBrowserMajorVersion',
  'qs_uaOsName',
  'qs_uaOsVersion',
  'svcVersion',
] as const;

/** §8.3 log event: each `qs_…` attribute and the parsed key (§2.2) it carries, in payload order. */
export const LOG_ATTRIBUTE_KEYS = [
  ['qs_ts_iso', 'ts_iso'],
  ['qs_ts_local', 'ts_local'],
  ['qs_log_source', 'source'],
  ['qs_log_level', 'level'],
  ['qs_host', 'host'],
  ['qs_subsystem', 'subsystem'],
  ['qs_windows_user', 'windows_user'],
  ['qs_message', 'message'],
  ['qs_exception_message', 'exception_message'],
  ['qs_user_full', 'user_full'],
  ['qs_user_directory', 'user_directory'],
  ['qs_user_id', 'user_id'],
  ['qs_command', 'command'],
  ['qs_result_code', 'result_code'],
  ['qs_origin', 'origin'],
  ['qs_context', 'context'],
  ['qs_task_name', 'task_name'],
  ['qs_app_name', 'app_name'],
  ['qs_task_id', 'task_id'],
  ['qs_app_id', 'app_id'],
  ['qs_execution_id', 'execution_id'],
  ['qs_proxy_session_id', 'proxy_session_id'],
  ['qs_engine_ts', 'engine_ts'],
  ['qs_process_id', 'process_id'],
  ['qs_engine_exe_version', 'engine_exe_version'],
  ['qs_server_started', 'server_started'],
  ['qs_entry_type', 'entry_type'],
  ['qs_session_id', 'session_id'],
] as const;

/** §8.3 log event: every built-in attribute name, in payload order. */
export const MONSAAS_LOG_EVENT_ATTRIBUTES = [
  'eventType',
  'timestamp',
  ...LOG_ATTRIBUTE_KEYS.map(([attribute]) => attribute),
  'svcVersion',
] as const;
