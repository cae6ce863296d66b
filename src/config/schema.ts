import { Type, type Static } from '@sinclair/typebox';

const Port = Type.Integer({ minimum: 0, maximum: 65535 });

/** The codecs PARLA_SIP_CODECS may list, as SDP spells them. */
export const SIP_CODEC_NAMES = ['PCMU', 'PCMA', 'G722', 'opus'] as const;

/** Every setting, its type and limits. Defaults live in config/default.json. */
export const ConfigSchema = Type.Object(
  {
    host: Type.String({ minLength: 1 }),
    port: Port,
    dataDir: Type.String({ minLength: 1 }),
    apiKey: Type.String({
      description: 'Bootstrap API key; empty means generate one on first start',
    }),
    databaseUrl: Type.String({
      description: 'Empty means the embedded PGlite store under dataDir',
    }),
    publicUrl: Type.String({
      description: 'Base of URLs returned by the API; empty means http://host:port',
    }),
    wsPort: Port,
    sipPort: Port,
    rtpPortMin: Port,
    rtpPortMax: Port,
    sipAdvertisedHost: Type.String({
      maxLength: 253,
      description:
        'Address given to SIP peers in Via, Contact and SDP (the public or trunk-facing IP); empty means host',
    }),
    sipCodecs: Type.String({
      minLength: 1,
      maxLength: 100,
      description:
        'Codecs of SIP calls, most preferred first: a comma list of PCMU, PCMA, G722, opus',
    }),
    rtpInactivityTimeoutMs: Type.Integer({
      minimum: 1000,
      maximum: 3600000,
      description: 'A SIP call with no RTP from the caller for this long ends',
    }),
    logLevel: Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    ),
    secretKey: Type.String({
      description: 'Key (32 bytes, base64 or hex) sealing secrets at rest',
    }),
    bodyLimitBytes: Type.Integer({ minimum: 1024, maximum: 104857600 }),
    maxFileBytes: Type.Integer({ minimum: 1, maximum: 1073741824 }),
    openaiBaseUrl: Type.String({ minLength: 1 }),
    openaiApiKey: Type.String(),
    anthropicBaseUrl: Type.String({ minLength: 1 }),
    anthropicApiKey: Type.String(),
    deepgramBaseUrl: Type.String({ description: "Empty means the vendor's own endpoint" }),
    deepgramApiKey: Type.String(),
    elevenLabsBaseUrl: Type.String({ description: "Empty means the vendor's own endpoint" }),
    elevenLabsApiKey: Type.String(),
    cartesiaBaseUrl: Type.String({ description: "Empty means the vendor's own endpoint" }),
    cartesiaApiKey: Type.String(),
    wsPublicUrl: Type.String({
      description: 'Base of websocket URLs returned by the API; empty means ws://host:wsPort',
    }),
    workerThreads: Type.Integer({
      minimum: 0,
      maximum: 256,
      description: 'Call worker threads; 0 means one per available core',
    }),
    workerHeartbeatTimeoutMs: Type.Integer({
      minimum: 500,
      maximum: 600000,
      description:
        'A call worker thread silent for this long is declared dead and its calls end; raise it on a machine shared with heavy work',
    }),
    vad: Type.Union([Type.Literal('silero'), Type.Literal('energy')], {
      description: 'Voice activity detector of every call',
    }),
    logFlushIntervalMs: Type.Integer({ minimum: 10, maximum: 60000 }),
    apiKeyCacheTtlMs: Type.Integer({ minimum: 0, maximum: 3600000 }),
  },
  { additionalProperties: false },
);

export type Config = Readonly<Static<typeof ConfigSchema>>;

/** Environment variable for each setting. */
export const ENV_NAMES: Readonly<Record<keyof Static<typeof ConfigSchema>, string>> = {
  host: 'PARLA_HOST',
  port: 'PARLA_PORT',
  dataDir: 'PARLA_DATA_DIR',
  apiKey: 'PARLA_API_KEY',
  databaseUrl: 'DATABASE_URL',
  publicUrl: 'PARLA_PUBLIC_URL',
  wsPort: 'PARLA_WS_PORT',
  sipPort: 'PARLA_SIP_PORT',
  rtpPortMin: 'PARLA_RTP_PORT_MIN',
  rtpPortMax: 'PARLA_RTP_PORT_MAX',
  sipAdvertisedHost: 'PARLA_SIP_ADVERTISED_HOST',
  sipCodecs: 'PARLA_SIP_CODECS',
  rtpInactivityTimeoutMs: 'PARLA_RTP_INACTIVITY_TIMEOUT_MS',
  logLevel: 'PARLA_LOG_LEVEL',
  secretKey: 'PARLA_SECRET_KEY',
  bodyLimitBytes: 'PARLA_BODY_LIMIT_BYTES',
  maxFileBytes: 'PARLA_MAX_FILE_BYTES',
  openaiBaseUrl: 'PARLA_OPENAI_BASE_URL',
  openaiApiKey: 'OPENAI_API_KEY',
  anthropicBaseUrl: 'PARLA_ANTHROPIC_BASE_URL',
  anthropicApiKey: 'ANTHROPIC_API_KEY',
  deepgramBaseUrl: 'PARLA_DEEPGRAM_BASE_URL',
  deepgramApiKey: 'DEEPGRAM_API_KEY',
  elevenLabsBaseUrl: 'PARLA_ELEVENLABS_BASE_URL',
  elevenLabsApiKey: 'ELEVENLABS_API_KEY',
  cartesiaBaseUrl: 'PARLA_CARTESIA_BASE_URL',
  cartesiaApiKey: 'CARTESIA_API_KEY',
  wsPublicUrl: 'PARLA_WS_PUBLIC_URL',
  workerThreads: 'PARLA_WORKER_THREADS',
  workerHeartbeatTimeoutMs: 'PARLA_WORKER_HEARTBEAT_TIMEOUT_MS',
  vad: 'PARLA_VAD',
  logFlushIntervalMs: 'PARLA_LOG_FLUSH_INTERVAL_MS',
  apiKeyCacheTtlMs: 'PARLA_API_KEY_CACHE_TTL_MS',
};
