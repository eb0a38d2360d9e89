// memory-clients.mjs: MCP clients of the TypeScript SDK for scripts/memory.sh.
//
//   node memory-clients.mjs probe URL
//       exit 0 once a session at URL answers tools/list with at least one
//       tool (the server and its upstreams are up), 1 after 60 s
//   node memory-clients.mjs hold URL N
//       open N sessions (initialize, notifications/initialized, then the
//       SDK opens the session's GET stream), print "open N GET_STREAMS" on
//       stdout once every session is connected and every GET stream has
//       its answer headers, then hold them until stdin closes; close them
//       and exit
//
// MCP_HUB_TS_SDK is the @modelcontextprotocol/sdk folder.

import { readFileSync } from "node:fs";
import { join } from "node:path";

const sdk = process.env.MCP_HUB_TS_SDK;
if (!sdk) {
	console.error("memory-clients.mjs: set MCP_HUB_TS_SDK to the @modelcontextprotocol/sdk folder");
	process.exit(2);
}
const { Client } = await import(join(sdk, "dist/esm/client/index.js"));
const { StreamableHTTPClientTransport } = await import(join(sdk, "dist/esm/client/streamableHttp.js"));
const sdkVersion = JSON.parse(readFileSync(join(sdk, "package.json"), "utf8")).version;

const [mode, url, nText] = process.argv.slice(2);

// streams counts GET streams the server accepted (a 2xx answer to the
// session's GET); a server without them answers 405 and the SDK goes on.
let streams = 0;
let streamsRefused = 0;
const waiters = [];
function countingFetch(input, init) {
	const get = (init?.method ?? "GET") === "GET";
	return fetch(input, init).then((resp) => {
		if (get) {
			if (resp.ok) streams++;
			else streamsRefused++;
			for (const w of waiters.splice(0)) w();
		}
		return resp;
	});
}

function connect(name) {
	const client = new Client({ name, version: "0" });
	const transport = new StreamableHTTPClientTransport(new URL(url), {
		fetch: countingFetch,
		// A held stream that drops is a measurement error, not something to
		// paper over with reconnects.
		reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1 },
	});
	return client.connect(transport).then(() => client);
}

if (mode === "probe") {
	const deadline = Date.now() + 60_000;
	for (;;) {
		try {
			const client = new Client({ name: "memory-probe", version: "0" });
			const transport = new StreamableHTTPClientTransport(new URL(url));
			await client.connect(transport);
			const { tools } = await client.listTools();
			await transport.terminateSession().catch(() => {});
			await client.close();
			if (tools.length > 0) process.exit(0);
		} catch {
			// not up yet
		}
		if (Date.now() > deadline) {
			console.error(`memory-clients.mjs: ${url} not ready after 60 s`);
			process.exit(1);
		}
		await new Promise((r) => setTimeout(r, 100));
	}
}

if (mode !== "hold") {
	console.error("usage: memory-clients.mjs probe URL | hold URL N");
	process.exit(2);
}
const n = Number(nText);
const clients = [];
let next = 0;
async function worker() {
	while (next < n) {
		const i = next++;
		clients.push(await connect(`memory-${i}`));
	}
}
await Promise.all(Array.from({ length: 32 }, worker));
// Each session's GET stream is opened after its initialized notification,
// in the background: wait until all have their answer.
const deadline = Date.now() + 60_000;
while (streams + streamsRefused < n && Date.now() < deadline) {
	await new Promise((r) => {
		waiters.push(r);
		setTimeout(r, 1000);
	});
}
console.log(`open ${clients.length} ${streams}`);
console.error(`memory-clients.mjs: TypeScript SDK ${sdkVersion}, ${clients.length} sessions, ${streams} GET streams open, ${streamsRefused} refused`);

process.stdin.resume();
process.stdin.on("end", async () => {
	await Promise.allSettled(clients.map((c) => c.close()));
	process.exit(0);
});
