/**
 * The `servers` of the AsyncAPI document, from the hub's public URL (`PUBLIC_URL`): where peers
 * connect. Socket.IO runs over WebSocket (`ws`/`wss`) with its engine at `<pathname>/socket.io/`.
 */
export function serversFor(publicUrl: string): Record<string, unknown> {
  const url = new URL(publicUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`the public URL must be http(s): ${publicUrl}`);
  const pathname = url.pathname.replace(/\/+$/, '');
  return {
    hub: {
      host: url.host,
      protocol: url.protocol === 'https:' ? 'wss' : 'ws',
      ...(pathname ? { pathname } : {}),
      title: 'relay-hub',
      description: `Socket.IO v4 at ${url.origin}, engine path ${pathname}/socket.io/. The SDKs take the origin as url${pathname ? ` and path '${pathname}/socket.io/'` : ''}; a namespace is the channel address.`,
    },
  };
}

/** The document with its `servers` for `publicUrl`: the build-time document is filled at serve time. */
export function withServers<T extends Record<string, unknown>>(document: T, publicUrl: string): T {
  return { ...document, servers: serversFor(publicUrl) };
}
