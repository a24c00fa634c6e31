import type { Request } from 'express';
import type { IocContainer, IocContainerFactory, ServiceIdentifier } from '@tsoa/runtime';
import { servicesOf, type HttpServices } from './http-services';

/** A controller class built from the services of the app that received the request. */
type ControllerClass = new (services: HttpServices) => unknown;

/**
 * tsoa's `iocModule`: a container per request that builds the controller with the services of
 * the Express app handling it (several hubs in one process each keep their own).
 */
export const iocContainer: IocContainerFactory<Request> = (req: Request): IocContainer => ({
  get<T>(controller: ServiceIdentifier<T>): T {
    if (typeof controller !== 'function') throw new Error(`cannot build ${String(controller)}`);
    return new (controller as ControllerClass)(servicesOf(req)) as T;
  },
});
