import type { Socket } from 'node:net';

/** Counts a socket's writes to the kernel from now on (one `_write` or `_writev` call each). */
export function countWrites(socket: Socket): { readonly count: number } {
  const counter = { count: 0 };
  for (const method of ['_write', '_writev'] as const) {
    const original = socket[method] as (...args: unknown[]) => void;
    socket[method] = function (this: Socket, ...args: unknown[]) {
      counter.count++;
      return original.apply(this, args);
    } as never;
  }
  return counter;
}
