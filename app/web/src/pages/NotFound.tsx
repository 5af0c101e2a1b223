/** A hash that names no page. */
import { PageHeading } from "../components/basics.js";

export function NotFound() {
  return (
    <>
      <PageHeading title="Page not found">There is no such page here.</PageHeading>
      <p>
        <a href="#/memory">Go to your memory</a>
      </p>
    </>
  );
}
