import type { ValidateError } from '@tsoa/runtime';
import { openApiSpec } from './docs';
import { ValidationError, type FieldError } from './errors';

type Location = 'path' | 'query' | 'header';

/**
 * Where each named parameter of the API lives, read from the generated spec. tsoa reports a bad
 * path or query parameter by its bare name, so this decides the prefix; names are unique per
 * location across the API (`id`, `agentId` in paths; `page`, `perPage`, filters in queries).
 */
const PARAMETER_LOCATIONS: ReadonlyMap<string, Location> = (() => {
  const locations = new Map<string, Location>();
  const paths = openApiSpec.paths as Record<string, Record<string, { parameters?: { name: string; in: Location }[] }>>;
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      for (const parameter of operation.parameters ?? []) locations.set(parameter.name, parameter.in);
    }
  }
  return locations;
})();

/**
 * tsoa's ValidateError as a 400 problem. tsoa names a failed body field `body.email` or
 * `requestBody.email` and a parameter by its bare name; clients get one scheme: `body.email`,
 * `body.scopes.0`, `path.agentId`, `query.perPage`.
 */
export function fromValidateError(err: ValidateError): ValidationError {
  const errors: FieldError[] = Object.entries(err.fields).map(([key, field]) => ({
    path: fieldPath(key),
    message: field.message,
  }));
  return new ValidationError(errors);
}

function fieldPath(key: string): string {
  const [head = '', ...rest] = key.split('.');
  const tail = rest.map((part) => part.replace(/^\$(\d+)$/, '$1'));
  if (head === 'body' || head === 'requestBody') return ['body', ...tail].join('.');
  // tsoa drops the `body.` prefix for array elements (`scopes.$0`): a name that is no parameter is a body field.
  return [PARAMETER_LOCATIONS.get(head) ?? 'body', head, ...tail].join('.');
}
