/**
 * The one zod every module under lambdas/ builds its schemas with: `zod/mini`, the tree-shakable
 * functional API (about 25 KB of a bundle, where the classic `zod` API costs about 97 KB in every
 * function because its methods cannot be tree-shaken). Unlike classic zod, zod/mini loads no
 * locale by itself, so its error messages would all read "Invalid input": this module installs
 * the English messages once, before any schema parses, and only the English ones reach a bundle.
 *
 *   import * as z from '../core/zod';
 *
 * ESLint forbids importing classic `'zod'`, or zod/mini directly, under lambdas/
 * (eslint.config.mjs).
 */
import { en } from 'zod/locales';
import { config } from 'zod/mini';

// The named import keeps the bundle to the English locale; `z.locales.en()` would pull in every
// locale zod ships (about 260 KB).
config(en());

// Re-exported name by name (consumers import it as a namespace): re-exporting one namespace
// object instead would keep every export of zod/mini in each bundle, every locale included.
export * from 'zod/mini';
