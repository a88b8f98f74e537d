// The real server-everything over stdio, with its simulated resource updates switched on from the start.
//
// Run as `node everything_updates.mjs PACKAGE_DIR` (the installed @modelcontextprotocol/server-everything).
// It starts the server exactly as the package's dist/transports/stdio.js does (createServer, then the SDK's
// StdioServerTransport), then does what the package's `toggle-subscriber-updates` tool does for a session:
// beginSimulatedResourceUpdates, which sends `notifications/resources/updated` every 5 s for each URI the
// client subscribed to with `resources/subscribe`. ATTEND_TEST_STARTS (when set) gets a line per start.
import { appendFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

const pkg = process.argv[2];
const url = (path) => pathToFileURL(path).href;
const sdk = join(dirname(pkg), "sdk", "dist", "esm");
const { StdioServerTransport } = await import(url(join(sdk, "server", "stdio.js")));
const { createServer } = await import(url(join(pkg, "dist", "server", "index.js")));
const { beginSimulatedResourceUpdates } = await import(url(join(pkg, "dist", "resources", "subscriptions.js")));

if (process.env.ATTEND_TEST_STARTS) {
  appendFileSync(process.env.ATTEND_TEST_STARTS, `everything ${process.pid}\n`);
}
const { server } = createServer();
await server.connect(new StdioServerTransport());
beginSimulatedResourceUpdates(server, undefined);
