import { type CallerName, type RouteContract, routes } from "@remram/contract";

/** One credential per caller, as Cortex's config takes them (each ≥ 16 characters, all distinct). */
export const testCredentials: Record<CallerName, string> = {
  gateway: "test-credential-gateway-0123456789",
  operator: "test-credential-operator-0123456789",
  admin: "test-credential-admin-0123456789",
  app: "test-credential-app-0123456789",
};

export function bearer(caller: CallerName): { authorization: string } {
  return { authorization: `Bearer ${testCredentials[caller]}` };
}

function matches(route: RouteContract, method: string, path: string): boolean {
  if (route.method !== method) return false;
  const pattern = new RegExp(`^${route.url.replace(/:[A-Za-z]\w*/g, "[^/]+")}$`);
  return pattern.test(path.split("?")[0] ?? path);
}

/**
 * The headers of the first caller the route table lets call `method url`: for suites about what a route does,
 * not who may call it (the adversarial suite names its callers itself). Static routes win over parameters.
 */
export function headersFor(method: string, url: string): { authorization: string } {
  const candidates = (Object.values(routes) as RouteContract[]).filter((route) =>
    matches(route, method, url),
  );
  const route = candidates.find((candidate) => !candidate.url.includes(":")) ?? candidates[0];
  const caller = route?.callers?.[0];
  if (caller === undefined) throw new Error(`no caller may call ${method} ${url}`);
  return bearer(caller);
}
