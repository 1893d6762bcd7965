/**
 * Wire format of the `goat.notebook` comm: requests `{id, op, ...args}` from the kernel,
 * replies `{id, ok: true, ...result}` or `{id, ok: false, error}` on the same comm.
 */
import { JSONObject, JSONValue } from '@lumino/coreutils';

/** The comm target the kernel opens. */
export const COMM_TARGET = 'goat.notebook';

/** A request as it arrives in a comm message's `content.data`. */
export type Request = JSONObject;

/** A failure the kernel should see as `{ok: false, error}` (bad input, unknown cell, ...). */
export class RequestError extends Error {}

/** The successful reply for `id` carrying `result` (`id` and `ok` always win over result keys). */
export function okReply(id: JSONValue, result: JSONObject): JSONObject {
  return { ...result, id, ok: true };
}

/** The failure reply for `id` with a readable message. */
export function errorReply(id: JSONValue, error: string): JSONObject {
  return { id, ok: false, error };
}

/** The request's `name` argument, which must be a string. */
export function requiredString(request: Request, name: string): string {
  const value = request[name];
  if (typeof value !== 'string') {
    throw new RequestError(`'${name}' must be a string`);
  }
  return value;
}

/** The request's `name` argument if present (null and undefined count as absent). */
export function optionalString(request: Request, name: string): string | undefined {
  const value = request[name];
  if (value === undefined || value === null) {
    return undefined;
  }
  if (typeof value !== 'string') {
    throw new RequestError(`'${name}' must be a string when given`);
  }
  return value;
}

/** The request's `name` argument as a JSON object if present. */
export function optionalObject(request: Request, name: string): JSONObject | undefined {
  const value = request[name];
  if (value === undefined || value === null) {
    return undefined;
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new RequestError(`'${name}' must be an object when given`);
  }
  return value;
}

/** Cell source given as a string or as nbformat's list of lines. */
export function sourceArgument(request: Request, name = 'source'): string {
  const value = request[name];
  if (typeof value === 'string') {
    return value;
  }
  if (Array.isArray(value) && value.every(line => typeof line === 'string')) {
    return value.join('');
  }
  throw new RequestError(`'${name}' must be a string`);
}
