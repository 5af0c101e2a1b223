import { writeFileSync } from "node:fs";
import { renderOpenApi } from "../openapi.js";
import { openApiPath } from "./paths.js";

// `npm run openapi -w contract`: write contract/openapi.json from the route table.
writeFileSync(openApiPath, renderOpenApi());
console.log(`wrote ${openApiPath}`);
