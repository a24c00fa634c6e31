/**
 * The relay protocol: names, codes and payload types. Browser-safe: no runtime dependencies.
 * Validation schemas (`schemas.ts`, TypeBox) and size checks (`payload-limits.ts`) are imported
 * from their own files by the server only.
 */
export * from './names';
export * from './codes';
export * from './payloads';
export * from './event-maps';
export * from './parts';
export * from './messages';
export * from './retryable';
