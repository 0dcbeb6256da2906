/**
 * A small precompiled router: static paths are one Map lookup, paths with `{params}` are matched segment by
 * segment. It knows which methods a path has, so a wrong method is a 405 with `Allow`, not a 404.
 */

/** What the router needs of a route. */
export interface Routable {
  readonly method: string;
  /** OpenAPI-style path, e.g. `/api/v1/console/keys/{key_id}`. */
  readonly path: string;
}

/** The outcome of matching a request. */
export type RouteMatch<R> =
  | { readonly kind: "found"; readonly route: R; readonly params: Readonly<Record<string, string>> }
  | { readonly kind: "method_not_allowed"; readonly allow: readonly string[] }
  | { readonly kind: "not_found" };

interface Pattern<R> {
  readonly segments: readonly (string | { readonly param: string })[];
  readonly methods: Map<string, R>;
}

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});
const NOT_FOUND = { kind: "not_found" } as const;

/** Compiles routes once; `match` then costs a Map lookup for static paths. */
export function compileRouter<R extends Routable>(routes: readonly R[]): { match(method: string, path: string): RouteMatch<R> } {
  // Static matches are answered with one preallocated result each.
  const statics = new Map<string, Map<string, RouteMatch<R>>>();
  const patterns: Pattern<R>[] = [];
  for (const route of routes) {
    if (!route.path.includes("{")) {
      let methods = statics.get(route.path);
      if (!methods) statics.set(route.path, (methods = new Map()));
      if (methods.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
      methods.set(route.method, { kind: "found", route, params: NO_PARAMS });
      continue;
    }
    const segments = route.path.split("/").map((s) => (s.startsWith("{") && s.endsWith("}") ? { param: s.slice(1, -1) } : s));
    let pattern = patterns.find((p) => p.segments.length === segments.length && p.segments.every((s, i) => JSON.stringify(s) === JSON.stringify(segments[i])));
    if (!pattern) patterns.push((pattern = { segments, methods: new Map() }));
    if (pattern.methods.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
    pattern.methods.set(route.method, route);
  }

  return {
    match(method, path) {
      const methods = statics.get(path);
      if (methods) {
        const found = methods.get(method);
        if (found) return found;
      }
      const allow = methods ? [...methods.keys()] : [];
      if (patterns.length > 0) {
        const parts = path.split("/");
        for (const p of patterns) {
          if (p.segments.length !== parts.length) continue;
          let params: Record<string, string> | null = {};
          for (let i = 0; i < parts.length && params; i++) {
            const seg = p.segments[i] as string | { param: string };
            const part = parts[i] as string;
            if (typeof seg === "string") {
              if (seg !== part) params = null;
            } else {
              const value = decodeSegment(part);
              if (value === null) params = null;
              else params[seg.param] = value;
            }
          }
          if (!params) continue;
          const route = p.methods.get(method);
          if (route) return { kind: "found", route, params };
          for (const m of p.methods.keys()) if (!allow.includes(m)) allow.push(m);
        }
      }
      return allow.length > 0 ? { kind: "method_not_allowed", allow } : NOT_FOUND;
    },
  };
}

function decodeSegment(part: string): string | null {
  if (part === "") return null;
  if (!part.includes("%")) return part;
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}
