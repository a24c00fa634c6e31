import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';

export type ClientIpResolver = (req: IncomingMessage) => string;

/**
 * The client address of a request under TRUST_PROXY, the same rule Express applies, so REST limits
 * and socket limits agree on who the client is.
 */
export function clientIpResolver(trustProxy: boolean | number | string): ClientIpResolver {
  const trust = compileTrust(trustProxy);
  return (req) => proxyaddr(req, trust);
}

function compileTrust(value: boolean | number | string): (addr: string, i: number) => boolean {
  if (value === true) return () => true;
  if (value === false) return () => false;
  if (typeof value === 'number') return (_addr, i) => i < value;
  return proxyaddr.compile(value.split(',').map((s) => s.trim()));
}
