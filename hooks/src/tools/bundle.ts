import { bundlePlugin } from "./bundle-plugin.js";
import { bundlePath } from "./paths.js";

// `npm run build -w hooks`: write the plugin's runtime entry, dist/index.js.
const bytes = await bundlePlugin();
console.log(`bundled ${bundlePath} (${Math.round(bytes / 1024)} KiB)`);
