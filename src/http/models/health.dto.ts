/** Answer of the health probes. */
export interface HealthDto {
  /** @example "ok" */
  status: 'ok' | 'unavailable';
  /**
   * Named readiness checks (readiness only), `true` = healthy.
   * @example {"notDraining":true}
   */
  checks?: { [name: string]: boolean };
}
