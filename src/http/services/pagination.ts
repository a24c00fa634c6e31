import { ValidationError } from '../errors';
import type { MetaListDto, PaginationModel, SingleModel } from '../models/envelope.dto';

/** Page size when `perPage` is absent. */
export const DEFAULT_PER_PAGE = 20;
/** Largest `perPage` a list accepts; more is a 400. */
export const MAX_PER_PAGE = 100;
/**
 * Largest `page` a list accepts (each route's `@maximum page`); more is a 400. It keeps the offset
 * a safe integer that a store can send as it is (Redis takes no `1e+21`).
 */
export const MAX_PAGE = 10_000_000;

/** A validated page request: 1-based `page`, `perPage` items, as an offset and limit for stores. */
export interface PageRequest {
  page: number;
  perPage: number;
  offset: number;
  limit: number;
}

/**
 * The page asked for, with defaults applied. The route's validation checks the bounds; they are
 * checked again here so that a route missing them answers 400 rather than reach a store.
 */
export function pageRequest(page = 1, perPage = DEFAULT_PER_PAGE): PageRequest {
  if (!Number.isInteger(page) || page < 1 || page > MAX_PAGE) {
    throw new ValidationError([{ path: 'query.page', message: `must be an integer from 1 to ${MAX_PAGE}` }]);
  }
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > MAX_PER_PAGE) {
    throw new ValidationError([{ path: 'query.perPage', message: `must be an integer from 1 to ${MAX_PER_PAGE}` }]);
  }
  return { page, perPage, offset: (page - 1) * perPage, limit: perPage };
}

/** `lastPage = max(1, ceil(total / perPage))`. */
export function metaOf(total: number, request: PageRequest): MetaListDto {
  return {
    total,
    lastPage: Math.max(1, Math.ceil(total / request.perPage)),
    currentPage: request.page,
    perPage: request.perPage,
  };
}

export function paginated<T>(data: T[], total: number, request: PageRequest): PaginationModel<T> {
  return { data, meta: metaOf(total, request) };
}

/** Pages an in-memory list (API keys, agents). */
export function pageOf<T>(all: T[], request: PageRequest): PaginationModel<T> {
  return paginated(all.slice(request.offset, request.offset + request.limit), all.length, request);
}

export function single<T>(data: T): SingleModel<T> {
  return { data, success: true };
}
