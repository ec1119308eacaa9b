// GitLab's two error vocabularies as one exception type. The error handler in app.ts renders them.

export class ApiError extends Error {
  constructor(
    public readonly status: number,
    public readonly body: unknown,
    public readonly headers: Record<string, string> = {},
  ) {
    super(typeof body === 'object' && body !== null ? JSON.stringify(body) : String(body));
  }
}

/** `{"message": …}` bodies (render_api_error!). */
export function apiError(status: number, message: unknown, headers?: Record<string, string>): ApiError {
  return new ApiError(status, { message }, headers);
}

/** `{"error": "…"}` bodies (Grape parameter validation, unknown routes, pagination limits). */
export function paramError(error: string, status = 400): ApiError {
  return new ApiError(status, { error });
}

export const badRequest = (reason?: string) => apiError(400, reason ? `400 Bad request - ${reason}` : '400 Bad request');
/** Missing attribute in GitLab's render form: `400 Bad request - "title" not given`. */
export const notGiven = (attr: string) => badRequest(`"${attr}" not given`);

/**
 * Required attributes missing (spec document 1 §7.2: `message` names the missing attribute, as
 * GitLab's `required_attributes!`): the first of them, `400 Bad request - "title" not given`.
 */
export function missingAttributes(names: readonly string[]): ApiError {
  return notGiven(names[0]!);
}
export const unauthorized = (reason?: string) => apiError(401, reason ? `401 Unauthorized - ${reason}` : '401 Unauthorized');
export const forbidden = (reason?: string) => apiError(403, reason ? `403 Forbidden - ${reason}` : '403 Forbidden');
/** `404 Project Not Found`; with no resource, ActiveRecord's lowercase `404 Not found`. */
export const notFound = (resource?: string) => apiError(404, resource ? `404 ${resource} Not Found` : '404 Not found');
export const methodNotAllowed = () => apiError(405, '405 Method Not Allowed');
export const conflict = (message?: unknown) => apiError(409, message ?? '409 Conflict');
export const resourceLock = () => apiError(409, '409 Conflict: Resource lock');
export const unprocessable = (message?: unknown) => apiError(422, message ?? '422 Unprocessable Entity');
export const preconditionFailed = () => apiError(412, '412 Precondition Failed');
/** Model validation failure: `{"message":{"attr":["msg"]}}`. */
export const validationError = (errors: Record<string, string[] | Record<string, string[]>>) => apiError(400, errors);

/** OAuth 2.0 errors: `{"error","error_description"}`, 401 only for invalid_client. */
export class OAuthError extends Error {
  constructor(
    public readonly error: string,
    public readonly description: string,
    public readonly status = error === 'invalid_client' ? 401 : 400,
    public readonly headers: Record<string, string> = {},
  ) {
    super(`${error}: ${description}`);
  }
}
