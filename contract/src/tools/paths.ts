import { fileURLToPath } from "node:url";

/** The committed OpenAPI document, at the contract package's root. */
export const openApiPath = fileURLToPath(new URL("../../openapi.json", import.meta.url));
