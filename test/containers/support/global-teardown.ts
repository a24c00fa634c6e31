// Once at the end of `npm run test:containers`: lets the next container-tier run on this machine go
// (support/run-lock.ts). The suites remove their own containers in afterAll.
import { releaseRunLock } from './run-lock';

export default function globalTeardown(): void {
  releaseRunLock();
}
