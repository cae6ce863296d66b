import { describe, expect, it } from 'vitest';
import { loadConfig, publicBaseUrl } from '../../src/config/load.js';

describe('loadConfig', () => {
  it('reads the defaults file and freezes the result', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.dataDir).toBe('./data');
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('takes environment overrides with their types', () => {
    const config = loadConfig({
      PARLA_PORT: '8080',
      PARLA_HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@h/db',
      PARLA_WS_PORT: '9001',
      PARLA_RTP_PORT_MIN: '20000',
      PARLA_RTP_PORT_MAX: '20100',
      PARLA_PUBLIC_URL: 'https://parla.example.com/',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: 'postgres://u@h/db',
      wsPort: 9001,
    });
    expect(publicBaseUrl(config)).toBe('https://parla.example.com');
    expect(publicBaseUrl(loadConfig({ PARLA_HOST: '0.0.0.0' }))).toBe('http://127.0.0.1:3000');
    expect(loadConfig({ ANTHROPIC_API_KEY: 'sk-ant' }).anthropicApiKey).toBe('sk-ant');
  });

  it('fails naming the key and its variable', () => {
    expect(() => loadConfig({ PARLA_PORT: 'eighty' })).toThrow(/port \(PARLA_PORT\)/);
    expect(() => loadConfig({ PARLA_PORT: '70000' })).toThrow(/port \(PARLA_PORT\)/);
    expect(() => loadConfig({ PARLA_PORT: '' })).toThrow(/PARLA_PORT/);
    expect(() => loadConfig({ PARLA_LOG_LEVEL: 'loud' })).toThrow(/logLevel \(PARLA_LOG_LEVEL\)/);
    expect(() => loadConfig({ PARLA_RTP_PORT_MIN: '5000', PARLA_RTP_PORT_MAX: '4000' })).toThrow(
      /PARLA_RTP_PORT_MIN/,
    );
    expect(() => loadConfig({ PARLA_PUBLIC_URL: 'not a url' })).toThrow(/PARLA_PUBLIC_URL/);
  });
});
