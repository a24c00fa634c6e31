/** What the logs carry. */
export const loggingSchema = {
  LOG_LEVEL: {
    doc: 'pino log level.',
    format: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    default: 'info',
    env: 'LOG_LEVEL',
  },
  LOG_PERSONAL_DATA: {
    doc: "Whether the connect line ('handshake accepted') carries the client's email from its token (on by default, for operators who trace a user's sessions). No other line carries it; false drops it there too.",
    format: 'strict-boolean',
    default: true,
    env: 'LOG_PERSONAL_DATA',
  },
};
