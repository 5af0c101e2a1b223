/**
 * Whose knowledge a request is about. A member asks about themself; naming another member takes a household admin
 * (the administer verb, as Kubernetes answered it when they signed in), and then Cortex is told the app acts as an
 * admin. The request never says who is an admin.
 */
import { AppError } from "../errors.js";
import type { Person } from "./identify.js";

export function subject(
  person: Pick<Person, "memberId" | "admin">,
  user: string | undefined,
): { userId: string; asAdmin: boolean } {
  if (user === undefined || user === person.memberId) return { userId: person.memberId, asAdmin: false };
  if (!person.admin)
    throw new AppError(
      403,
      `only a household admin sees or changes another member's knowledge; ${person.memberId} is not one (the administer verb on remramappliances)`,
    );
  return { userId: user, asAdmin: true };
}
