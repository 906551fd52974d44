/**
 * What every dashboard request carries between the guard and the pages: the CSRF token
 * (`c.get("csrf")`) a page embeds in its forms. The app is `new Hono<WebEnv>()`.
 */
import type {} from "hono";
export type WebEnv = { Variables: { csrf: string } };
