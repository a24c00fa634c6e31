import { Registry } from 'prom-client';
import { TalliedCounter } from '../../src/metrics/metrics';

describe('TalliedCounter', () => {
  function counter() {
    const registry = new Registry();
    const c = new TalliedCounter({ name: 't_total', help: 'test', labelNames: ['event', 'result'] as const, registers: [registry] });
    return { registry, c };
  }
  const value = async (c: TalliedCounter<'event' | 'result'>, event: string, result: string) =>
    (await c.get()).values.find((v) => v.labels.event === event && v.labels.result === result)?.value;

  it('adds tallies to the counter when collected, beside plain increments, once each', async () => {
    const { c } = counter();
    const message = c.bind({ event: 'message', result: 'ok' });
    for (let i = 0; i < 3; i++) message.add();
    c.bind({ event: 'reply', result: 'ok' }).add();
    c.inc({ event: 'message', result: 'TIMEOUT' });
    c.inc({ event: 'message', result: 'ok' }, 2);
    expect(await value(c, 'message', 'ok')).toBe(5);
    expect(await value(c, 'reply', 'ok')).toBe(1);
    expect(await value(c, 'message', 'TIMEOUT')).toBe(1);
    // A second collection adds nothing new; later tallies add on.
    expect(await value(c, 'message', 'ok')).toBe(5);
    message.add();
    expect(await value(c, 'message', 'ok')).toBe(6);
  });

  it('shows tallies in the exposition a scrape reads', async () => {
    const { registry, c } = counter();
    const message = c.bind({ event: 'message', result: 'ok' });
    message.add();
    message.add();
    expect(await registry.metrics()).toContain('t_total{event="message",result="ok"} 2');
  });
});
