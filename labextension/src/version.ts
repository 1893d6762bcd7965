/**
 * The extension's version, read from package.json at bundle time so it never drifts.
 */

// The bundler resolves require(); TypeScript only needs to know it exists.
declare function require(path: string): unknown;

export const VERSION = (require('../package.json') as { version: string }).version;
