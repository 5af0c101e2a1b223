/**
 * The callers of Cortex's API. Each has its own credential (a Secret the operator generates) and may call only the
 * routes that list it in the route table:
 * - gateway: the OpenClaw gateway's hooks plugin, for the sessions it serves (retrieve, ingest, reflect, archive);
 * - operator: the Remram operator (dream, proposals, promotion, the dimension policy);
 * - admin: the household's administrator (erasure, archive verification);
 * - app: the remram-app (what a person sees, corrects and forgets; erasure of the person's own data only).
 */
import { z } from "zod";

export const callerNames = ["gateway", "operator", "admin", "app"] as const;
export const callerName = z.enum(callerNames);
export type CallerName = z.infer<typeof callerName>;

/**
 * The `error` of Cortex's 403 for a caller the route does not list: a matter of configuration (the credential), not
 * of the request's items, so a client keeps such items and sends them again once it is fixed.
 */
export const callerRefusedError = "Caller Not Allowed";
