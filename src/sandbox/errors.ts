import type { ZodError } from 'zod';

/** Field name -> messages, the spec's `errors` map of a 422 answer. */
export type FieldErrors = Record<string, string[]>;

/**
 * An answer other than 2xx, raised anywhere in a route and rendered by the
 * app's error handler as `{message, code?, errors?}` (spec: Errors).
 */
export class ApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 402 | 403 | 404 | 409 | 422 | 429 | 500,
    message: string,
    readonly code?: string,
    readonly errors?: FieldErrors,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** JSON body of the answer; internals (stack, cause) never leave the process. */
  body(): { message: string; code?: string; errors?: FieldErrors } {
    return {
      message: this.message,
      ...(this.code ? { code: this.code } : {}),
      ...(this.errors ? { errors: this.errors } : {}),
    };
  }
}

export const notFound = (what = 'Record'): ApiError => new ApiError(404, `${what} not found`);
export const forbidden = (message: string, code?: string): ApiError => new ApiError(403, message, code);

/** 422 naming one field: "a value names something that does not exist" and friends. */
export function invalid(field: string, message: string): ApiError {
  return new ApiError(422, 'The given data was invalid.', undefined, { [field]: [message] });
}

/** 422 with several fields at once. */
export function invalidMany(errors: FieldErrors): ApiError {
  return new ApiError(422, 'The given data was invalid.', undefined, errors);
}

/** Maps zod issues to the `errors` map: dotted path -> messages (root issues under `body`, unknown fields under their names). */
export function fromZod(error: ZodError): ApiError {
  const errors: FieldErrors = {};
  for (const issue of error.issues) {
    // An unknown field is named by its own path, so `errors` lists each one.
    const paths = issue.code === 'unrecognized_keys' ? issue.keys.map((k) => [...issue.path, k]) : [issue.path];
    for (const path of paths) {
      const key = path.length ? path.map(String).join('.') : 'body';
      (errors[key] ??= []).push(issue.message);
    }
  }
  return invalidMany(errors);
}
