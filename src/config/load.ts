import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { ParlaError } from '../core/errors.js';
import { packageRoot } from '../core/package-root.js';
import { ConfigSchema, ENV_NAMES, SIP_CODEC_NAMES, type Config } from './schema.js';

type Env = Readonly<Record<string, string | undefined>>;
type Key = keyof typeof ENV_NAMES;

/** Used when config/default.json predates the setting. */
const DEFAULT_SIP_CODECS = 'PCMU,PCMA,G722,opus';

/**
 * The sipCodecs list in canonical spelling (`pcmu, G722` → `PCMU,G722`), or a problem naming the
 * unknown or repeated entry.
 */
function normalizeSipCodecs(list: string): { value: string } | { problem: string } {
  const names: string[] = [];
  for (const raw of list.split(',')) {
    const name = SIP_CODEC_NAMES.find((known) => known.toLowerCase() === raw.trim().toLowerCase());
    if (name === undefined) {
      return { problem: `"${raw.trim()}" is not one of ${SIP_CODEC_NAMES.join(', ')}` };
    }
    if (names.includes(name)) {
      return { problem: `${name} is listed twice` };
    }
    names.push(name);
  }
  return { value: names.join(',') };
}

function parseEnvValue(key: Key, raw: string, defaults: Record<string, unknown>): unknown {
  if (typeof defaults[key] !== 'number') {
    return raw;
  }
  const trimmed = raw.trim();
  // Number('') is 0 and Number('0x10') is 16: accept plain decimal integers only.
  return /^-?\d+$/.test(trimmed) ? Number(trimmed) : raw;
}

/**
 * Reads config/default.json, applies environment overrides, validates and freezes the result.
 * A bad value throws an ERR_CONFIG error naming the setting and its environment variable.
 */
export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const defaultsPath = join(packageRoot(), 'config', 'default.json');
  const defaults = JSON.parse(readFileSync(defaultsPath, 'utf8')) as Record<string, unknown>;
  const merged: Record<string, unknown> = { sipCodecs: DEFAULT_SIP_CODECS, ...defaults };
  for (const key of Object.keys(ENV_NAMES) as Key[]) {
    const raw = env[ENV_NAMES[key]];
    if (raw !== undefined) {
      merged[key] = parseEnvValue(key, raw, defaults);
    }
  }
  Object.assign(merged, overrides);

  const problems: string[] = [];
  for (const error of Value.Errors(ConfigSchema, merged)) {
    const key = error.path.replace(/^\//, '') as Key;
    const source = ENV_NAMES[key] ? ` (${ENV_NAMES[key]})` : '';
    problems.push(
      `config ${key || '(root)'}${source}: ${error.message}, got ${JSON.stringify(error.value)}`,
    );
  }
  const config = merged as Config;
  if (problems.length === 0 && config.rtpPortMin > config.rtpPortMax) {
    problems.push(
      `config rtpPortMin (PARLA_RTP_PORT_MIN) must not exceed rtpPortMax (PARLA_RTP_PORT_MAX)`,
    );
  }
  if (problems.length === 0) {
    const codecs = normalizeSipCodecs(config.sipCodecs);
    if ('problem' in codecs) {
      problems.push(`config sipCodecs (PARLA_SIP_CODECS): ${codecs.problem}`);
    } else {
      merged.sipCodecs = codecs.value;
    }
  }
  if (problems.length === 0 && config.publicUrl !== '' && !URL.canParse(config.publicUrl)) {
    problems.push(
      `config publicUrl (PARLA_PUBLIC_URL): must be an absolute URL, got "${config.publicUrl}"`,
    );
  }
  if (problems.length > 0) {
    throw new ParlaError('ERR_CONFIG', problems);
  }
  return Object.freeze(config);
}

/** The base URL that returned URLs use. */
export function publicBaseUrl(config: Config): string {
  if (config.publicUrl !== '') {
    return config.publicUrl.replace(/\/+$/, '');
  }
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host}:${config.port}`;
}

/** The base of websocket URLs that returned URLs use (transport, monitor listen). */
export function wsPublicBaseUrl(config: Config): string {
  if (config.wsPublicUrl !== '') {
    return config.wsPublicUrl.replace(/\/+$/, '');
  }
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `ws://${host}:${config.wsPort}`;
}
