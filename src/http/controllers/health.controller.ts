import { Controller, Get, OperationId, Response, Route, Tags } from '@tsoa/runtime';
import type { HttpServices } from '../http-services';
import type { HealthDto } from '../models/health.dto';

/** Probes for load balancers and orchestrators. No authentication. */
@Route('health')
@Tags('Health')
export class HealthController extends Controller {
  constructor(private readonly services: HttpServices) {
    super();
  }

  /**
   * 200 while the process serves requests.
   * @summary Liveness probe
   */
  @Get('live')
  @OperationId('getLiveness')
  public async getLiveness(): Promise<HealthDto> {
    return { status: 'ok' };
  }

  /**
   * 200 when this replica takes traffic: not draining and, with Redis, a pub/sub probe
   * round-trips; 503 otherwise, with the failing check.
   * @summary Readiness probe
   */
  @Get('ready')
  @OperationId('getReadiness')
  @Response<HealthDto>(503, 'Not ready: draining or shared state unreachable')
  public async getReadiness(): Promise<HealthDto> {
    const { ready, checks } = await this.services.readiness();
    if (!ready) this.setStatus(503);
    return { status: ready ? 'ok' : 'unavailable', checks };
  }
}
