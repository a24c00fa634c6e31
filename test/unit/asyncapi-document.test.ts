import { Type } from '@sinclair/typebox';
import { publicUrl } from '../../src/config/public-url';
import { asyncApiDocument, operationId } from '../../src/protocol/asyncapi.document';
import { serversFor, withServers } from '../../src/protocol/asyncapi.servers';
import { ProtocolRegistry, type NamespaceSpec } from '../../src/protocol/protocol.registry';

/** The generator's pure parts: servers from the public URL, operation ids, and registries it refuses. */
describe('AsyncAPI generator', () => {
  describe('servers', () => {
    it('turns an https URL with a prefix into a wss server with that pathname', () => {
      expect(serversFor('https://chat.example.com/relay')).toEqual({
        hub: expect.objectContaining({ host: 'chat.example.com', protocol: 'wss', pathname: '/relay' }),
      });
      expect(JSON.stringify(serversFor('https://chat.example.com/relay'))).toContain("'/relay/socket.io/'");
    });

    it('turns an http origin into a ws server without pathname', () => {
      const { hub } = serversFor('http://localhost:3000/') as { hub: Record<string, unknown> };
      expect(hub).toMatchObject({ host: 'localhost:3000', protocol: 'ws' });
      expect(hub.pathname).toBeUndefined();
    });

    it('refuses a URL that is not http(s)', () => {
      expect(() => serversFor('ftp://example.com')).toThrow('must be http(s)');
      expect(() => serversFor('example.com')).toThrow();
    });

    it('replaces only the servers of a document', () => {
      const doc = { asyncapi: '3.0.0', servers: { hub: { host: 'old' } }, channels: { a: 1 } };
      expect(withServers(doc, 'https://new.example.com')).toEqual({ ...doc, servers: serversFor('https://new.example.com') });
      expect(doc.servers.hub.host).toBe('old');
    });
  });

  describe('publicUrl', () => {
    it.each([
      [{ PUBLIC_URL: 'https://chat.example.com/relay', HOST: '0.0.0.0', PORT: 3000 }, 'https://chat.example.com/relay'],
      [{ PUBLIC_URL: null, HOST: '0.0.0.0', PORT: 3000 }, 'http://localhost:3000'],
      [{ PUBLIC_URL: null, HOST: '::', PORT: 8080 }, 'http://localhost:8080'],
      [{ PUBLIC_URL: null, HOST: '::1', PORT: 8080 }, 'http://[::1]:8080'],
      [{ PUBLIC_URL: null, HOST: '10.0.0.5', PORT: 80 }, 'http://10.0.0.5:80'],
    ])('%j → %s', (config, url) => {
      expect(publicUrl(config)).toBe(url);
      expect(() => serversFor(url)).not.toThrow();
    });
  });

  it('names operations after channel, action and event', () => {
    expect(operationId('client', 'receive', 'auth:refresh')).toBe('clientReceiveAuthRefresh');
    expect(operationId('agent', 'send', 'session:closed')).toBe('agentSendSessionClosed');
    expect(operationId('client', 'receive', 'connect')).toBe('clientReceiveConnect');
  });

  describe('refuses a registry it cannot describe faithfully', () => {
    const base = ProtocolRegistry.client;
    const withEvents = (send: NamespaceSpec['send']) => ({ client: { ...base, send } });

    it('a payload schema without a title', () => {
      const registry = withEvents({ odd: { summary: 'x', payload: Type.Object({ a: Type.String() }) } });
      expect(() => asyncApiDocument('http://localhost:3000', registry)).toThrow('needs a title');
    });

    it('two different schemas with one title', () => {
      const registry = withEvents({
        ...base.send,
        odd: { summary: 'x', payload: Type.Object({ a: Type.String() }, { title: 'SessionInfo' }) },
      });
      expect(() => asyncApiDocument('http://localhost:3000', registry)).toThrow('two different schemas are titled SessionInfo');
    });

    it('two events of one channel with the same payload schema', () => {
      const registry = withEvents({ ...base.send, twin: { summary: 'another event', payload: base.send.session.payload } });
      expect(() => asyncApiDocument('http://localhost:3000', registry)).toThrow(
        'two messages on channel client have the payload SessionInfo',
      );
    });
  });
});
