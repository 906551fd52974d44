/**
 * Finds the route for a request: method plus a path matched against templates such as
 * `/repos/{owner}/{repo}`; a last part written `{name+}` takes the rest of the path,
 * slashes and all (a git ref such as `heads/robot-army/issue-2`, sent encoded or not).
 */
import type { Route } from "./http.ts";

/** The route a request matched and its decoded `{name}` parts. */
export interface RouteMatch<R extends RouteName = Route> {
  route: R;
  params: Record<string, string>;
}

/** What a route is known by: its method and path template. */
export type RouteName = Pick<Route, "method" | "template">;

/** A matcher over the routes, tried in order; a trailing slash is ignored, a badly encoded part matches nothing. */
export function makeRouter<R extends RouteName = Route>(routes: readonly R[]): (method: string, path: string) => RouteMatch<R> | undefined {
  const table = routes.map((route) => ({ route, ...templatePattern(route.template) }));
  return (method, path) => {
    const trimmed = path.replace(/\/+$/, "") || "/";
    for (const { route, regex, names } of table) {
      if (route.method !== method) continue;
      const match = regex.exec(trimmed);
      if (!match) continue;
      try {
        return { route, params: Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(match[i + 1])])) };
      } catch {
        return undefined;
      }
    }
    return undefined;
  };
}

function templatePattern(template: string): { regex: RegExp; names: string[] } {
  const names: string[] = [];
  const source = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{(\w+)(\\\+)?\}/g, (_, name: string, rest?: string) => {
    names.push(name);
    return rest ? "(.+)" : "([^/]+)";
  });
  return { regex: new RegExp(`^${source}$`), names };
}
