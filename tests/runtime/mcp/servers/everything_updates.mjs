// The real server-everything over stdio, with its simulated resource updates switched on from the start.
//
// Run as `node everything_updates.mjs PACKAGE_DIR` (the installed @modelcontextprotocol/server-everything).
// It starts the server exactly as the package's dist/transports/stdio.js does (createServer, then the SDK's
// StdioServerTransport), then does what the package's `toggle-subscriber-updates` tool does for a session:
// beginSimulatedResourceUpdates, which sends `notifications/resources/updated` for each URI the client
// subscribed to with `resources/subscribe`: once at once, then every 5 s, an interval the package fixes
// (its API takes none). A test would wait those 5 s, so this starts the updates anew every UPDATE_EVERY ms
// (stopSimulatedResourceUpdates, then beginSimulatedResourceUpdates, which sends at once): the package's own
// notifications, once a second. ATTEND_TEST_STARTS (when set) gets a line per start.
import { appendFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

const UPDATE_EVERY = 1000;

const pkg = process.argv[2];
const url = (path) => pathToFileURL(path).href;
const sdk = join(dirname(pkg), "sdk", "dist", "esm");
const { StdioServerTransport } = await import(url(join(sdk, "server", "stdio.js")));
const { createServer } = await import(url(join(pkg, "dist", "server", "index.js")));
const { beginSimulatedResourceUpdates, stopSimulatedResourceUpdates } = await import(url(join(pkg, "dist", "resources", "subscriptions.js")));

if (process.env.ATTEND_TEST_STARTS) {
  appendFileSync(process.env.ATTEND_TEST_STARTS, `everything ${process.pid}\n`);
}
const { server } = createServer();
await server.connect(new StdioServerTransport());
beginSimulatedResourceUpdates(server, undefined);
const anew = setInterval(() => {
  stopSimulatedResourceUpdates(undefined);
  beginSimulatedResourceUpdates(server, undefined);
}, UPDATE_EVERY);
// The updates' timers would keep the process alive once its client closed stdin (the package's own stdio
// server ends then): stop them, so it ends as that one does, rather than at the client's kill 2 s later.
process.stdin.on("end", () => {
  clearInterval(anew);
  stopSimulatedResourceUpdates(undefined);
});
