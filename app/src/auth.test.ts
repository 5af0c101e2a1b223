import { describe, expect, it } from "vitest";
import { crossSiteRefusal } from "./auth.js";

const json = "application/json; charset=utf-8";

describe("crossSiteRefusal", () => {
  it("lets reads through, whatever their origin", () => {
    expect(crossSiteRefusal("GET", { "sec-fetch-site": "cross-site" })).toBeUndefined();
  });

  it("lets a change with a JSON body from the app's own pages or from a tool through", () => {
    expect(
      crossSiteRefusal("POST", { "content-type": json, "sec-fetch-site": "same-origin" }),
    ).toBeUndefined();
    // kubectl and curl send no Sec-Fetch-Site.
    expect(crossSiteRefusal("POST", { "content-type": "application/json" })).toBeUndefined();
  });

  it("refuses a change another page could make: no body, a form, text, or another site's or origin's page", () => {
    expect(crossSiteRefusal("POST", {})).toMatch(/JSON body/);
    expect(crossSiteRefusal("POST", { "content-type": "application/x-www-form-urlencoded" })).toMatch(
      /JSON body/,
    );
    expect(crossSiteRefusal("POST", { "content-type": "text/plain" })).toMatch(/JSON body/);
    expect(crossSiteRefusal("POST", { "content-type": json, "sec-fetch-site": "same-site" })).toMatch(
      /Sec-Fetch-Site: same-site/,
    );
    expect(crossSiteRefusal("DELETE", { "sec-fetch-site": "cross-site" })).toMatch(/own pages/);
  });
});
