import type { HubConfig } from './config';

/**
 * The hub's public URL: `PUBLIC_URL` when set, else `http://<HOST>:<PORT>` with a wildcard HOST
 * (`0.0.0.0`, `::`) read as `localhost`. The AsyncAPI document names it as its server.
 */
export function publicUrl(config: Pick<HubConfig, 'PUBLIC_URL' | 'HOST' | 'PORT'>): string {
  if (config.PUBLIC_URL) return config.PUBLIC_URL;
  const host = ['0.0.0.0', '::', ''].includes(config.HOST) ? 'localhost' : config.HOST;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.PORT}`;
}
