/**
 * Response envelopes of the REST API (docs/rest.md): one item in {@link SingleModel}, a page of items
 * in {@link PaginationModel} with its {@link MetaListDto}. Always instantiate them with a named DTO
 * (`SingleModel<UserDto>`) so the spec gets one named schema per envelope.
 */

/** One item. */
export interface SingleModel<T> {
  data: T;
  /**
   * Always `true` on a 2xx response; errors use problem+json instead.
   * @example true
   */
  success: boolean;
}

/** Paging facts of a list response. `lastPage = max(1, ceil(total / perPage))`. */
export interface MetaListDto {
  /**
   * Items matching the filters, over all pages.
   * @isInt
   * @minimum 0
   * @example 42
   */
  total: number;
  /**
   * Number of the last page (at least 1).
   * @isInt
   * @minimum 1
   * @example 3
   */
  lastPage: number;
  /**
   * The page returned (1-based).
   * @isInt
   * @minimum 1
   * @example 1
   */
  currentPage: number;
  /**
   * Page size used.
   * @isInt
   * @minimum 1
   * @maximum 100
   * @example 20
   */
  perPage: number;
}

/** One page of items. */
export interface PaginationModel<T> {
  data: T[];
  meta: MetaListDto;
}
