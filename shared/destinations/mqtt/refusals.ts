/**
 * What a failed MQTT connection means for the operator: a broker that answered CONNECT with a
 * refusal (MQTT 3.1.1 §3.2.2.3 return codes, MQTT 5 §3.2.2.2 reason codes) or a TLS handshake that
 * failed, in words, with what to check. Other failures (connection refused, reset, timed out) are
 * outages of the network or the broker, not of the settings: `connectionFailure` gives undefined.
 */

/** Why the connection failed and what to check, for one ERROR line. */
export interface ConnectionFailure {
  kind: 'refused' | 'tls';
  /** The CONNACK return or reason code, or the TLS error code (`DEPTH_ZERO_SELF_SIGNED_CERT`, …). */
  code: string;
  /** The reason in words, as the library or Node said it. */
  reason: string;
  /** What to check, naming the keys. */
  check: string;
}

const CREDENTIALS = 'Svc.mqttConfig.username and Svc.mqttConfig.password';

/** What to check for a CONNACK return code (3.1.1: 1–5) or reason code (5: 128–159). */
const REFUSAL_CHECKS: Readonly<Record<number, string>> = {
  1: "the broker's MQTT version: it does not accept MQTT 3.1.1",
  2: 'Svc.mqttConfig.clientId: the broker refuses that client id (some brokers take at most 23 letters and digits)',
  3: 'the broker: it is up but its MQTT service is unavailable',
  4: CREDENTIALS,
  5: `${CREDENTIALS} (or the client certificate), and the broker's access rules for this user and client id`,
  133: 'Svc.mqttConfig.clientId: the broker refuses that client id',
  134: CREDENTIALS,
  135: `${CREDENTIALS} (or the client certificate), and the broker's access rules for this user and client id`,
  136: 'the broker: it is up but its MQTT service is unavailable',
  137: 'the broker: it is too busy to take the connection',
  138: "the broker's ban list: it banned this client",
  140: 'the broker: it wants another authentication method',
  159: "the broker's connection rate limit",
};

/** TLS errors of the broker's certificate: Node's verification codes. */
const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
]);

const PROPERTY = (value: unknown, name: string): unknown =>
  typeof value === 'object' && value !== null ? Reflect.get(value, name) : undefined;

/**
 * The failure `err` stands for, or undefined when it is an outage rather than a refusal.
 * `refusal`: the error is the library's answer to a refusing CONNACK (its numeric code is the return
 * or reason code).
 */
export function connectionFailure(err: unknown, refusal: boolean): ConnectionFailure | undefined {
  const reason = err instanceof Error ? err.message : String(err);
  const code = PROPERTY(err, 'code');
  if (refusal && typeof code === 'number')
    return {
      kind: 'refused',
      code: String(code),
      reason: reason.replace(/^Connection refused: /, ''),
      check: REFUSAL_CHECKS[code] ?? `the broker's log for why it refused the connection (code ${code})`,
    };
  const text = typeof code === 'string' ? code : '';
  if (UNTRUSTED.has(text) || reason === 'TLS not authorized')
    return {
      kind: 'tls',
      code: text || 'TLS_NOT_AUTHORIZED',
      reason,
      check:
        "Svc.mqttConfig.tls.caFile: it must hold the CA that signed the broker's certificate (empty = Node's public CAs); tls.rejectUnauthorized false accepts any certificate (tests only)",
    };
  if (text === 'CERT_HAS_EXPIRED' || text === 'CERT_NOT_YET_VALID')
    return { kind: 'tls', code: text, reason, check: "the broker's certificate dates, and this host's clock" };
  if (text === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return {
      kind: 'tls',
      code: text,
      reason,
      check: "Svc.mqttConfig.brokerHost: it must be a name or address the broker's certificate holds",
    };
  if (/CERTIFICATE_REQUIRED|HANDSHAKE_FAILURE/.test(text))
    return {
      kind: 'tls',
      code: text,
      reason,
      check:
        'Svc.mqttConfig.tls.certFile and tls.keyFile: the broker asks for a client certificate, and none (or none it takes) was sent',
    };
  if (/ALERT_(UNKNOWN_CA|BAD_CERTIFICATE|CERTIFICATE_UNKNOWN|DECRYPT_ERROR|ACCESS_DENIED)/.test(text))
    return {
      kind: 'tls',
      code: text,
      reason,
      check:
        "Svc.mqttConfig.tls.certFile: the broker does not accept the client certificate (check its CA and the broker's cafile)",
    };
  if (text === 'ERR_SSL_WRONG_VERSION_NUMBER' || text === 'ERR_SSL_PACKET_LENGTH_TOO_LONG')
    return {
      kind: 'tls',
      code: text,
      reason,
      check:
        'Svc.mqttConfig.brokerPort: it does not speak TLS (plain MQTT listens on 1883, MQTT over TLS on 8883), or set tls.enable false',
    };
  if (text.startsWith('ERR_SSL_') || text.startsWith('ERR_TLS_'))
    return { kind: 'tls', code: text, reason, check: "Svc.mqttConfig.tls.* and the broker's TLS listener" };
  return undefined;
}
