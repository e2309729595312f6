// Why a connection to the registry failed, in words: the few the header and `check` show
// (the cause), and the longer last error.

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA']);
const DROP_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** Why a connection failed, in the few words the header and `check` show. */
export function failureCause(err: Error, url: string): string {
  const code = (err as { code?: string }).code ?? '';
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (DNS_CODES.has(code)) {
    const host = (err as { hostname?: string }).hostname ?? hostOf(url);
    return `DNS lookup failed (${host})`;
  }
  if (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS') || code.includes('CERT') || code === 'EPROTO' || /\b(SSL|TLS)\b|certificate/i.test(err.message)) {
    // OpenSSL's text ("write EPROTO 80…:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/…"): its reason.
    const openssl = /error:[0-9A-F]+:SSL routines:[^:]*:([^:]+)/i.exec(err.message);
    return `TLS error: ${openssl ? openssl[1] : err.message.split('\n')[0]}`;
  }
  if (DROP_CODES.has(code) || err.message === 'socket hang up') return 'connection dropped';
  if (code === 'ETIMEDOUT' || /handshake has timed out/i.test(err.message)) return 'no answer (timed out)';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'host unreachable';
  if (code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') return 'a frame over the max payload';
  return err.message;
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

/** The last error of a failed connection, with what to do about it where there is something. */
export function describeError(err: Error, maxPayload: number): string {
  const code = (err as { code?: string }).code;
  if (code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') {
    return `a frame was larger than the max payload (${maxPayload} bytes); raise --max-payload`;
  }
  if (code === 'ECONNREFUSED') return `nothing listens at the registry address (${err.message})`;
  return err.message;
}

/** The 401 and other non-upgrade answers: the last error and the cause. */
export function refusalText(statusCode: number | undefined): { error: string; cause: string } {
  return statusCode === 401
    ? { error: 'the registry refused the token (HTTP 401); check HYPI_TOKEN or --token-file', cause: 'token refused (401)' }
    : { error: `the registry answered HTTP ${statusCode} instead of a WebSocket`, cause: `HTTP ${statusCode} instead of a WebSocket` };
}
