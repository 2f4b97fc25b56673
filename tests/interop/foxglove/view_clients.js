// Viewers of `rtde view` one after another, each with Foxglove's own client
// (@foxglove/ws-protocol over `ws`): connect, subscribe to /rtde/outputs, decode a message
// with its schema, close. Every close must be clean: the viewer sees 1000 or 1005, never
// 1006 (the connection dropped without the server's Close). Last, one viewer stays until
// the server shuts down, which it must say with 1001.
//
//   node view_clients.js ws://127.0.0.1:PORT
//
// Takes its commands on stdin, one a line, so that the test can measure between them:
//   viewers N   N viewers in turn; prints
//               {"event":"summary","clients":N,"codes":{CODE:N},"milliseconds":MS}
//   hold        one viewer that stays; prints {"event":"holding"} once it has a message,
//               then {"event":"server closed","code":N} and ends
// Exits 1, saying why on stderr, on anything else.

"use strict";

const readline = require("readline");
const { FoxgloveClient } = require("@foxglove/ws-protocol");
const WebSocket = require("ws");
const { decoderFor } = require("./decode");

const TIMEOUT_MS = 10_000;

function fail(message) {
  process.stderr.write(`view_clients.js: ${message}\n`);
  process.exit(1);
}

function print(line) {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

function within(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A viewer with its first /rtde/outputs message decoded; resolves to its client and its close. */
async function viewer(url, round) {
  const ws = new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
  const client = new FoxgloveClient({ ws });
  client.on("error", (e) => fail(`viewer ${round}: ${e.message ?? e}`));
  const closed = new Promise((resolve) => client.on("close", (event) => resolve(event.code)));
  const channels = await within(new Promise((resolve) => client.on("advertise", resolve)), `advertise (viewer ${round})`);
  const outputs = channels.find((c) => c.topic === "/rtde/outputs") ?? fail("/rtde/outputs is not advertised");
  const decode = decoderFor({
    messageEncoding: outputs.encoding,
    schemaEncoding: outputs.schemaEncoding,
    schemaName: outputs.schemaName,
    schema: outputs.schema,
  });
  const first = new Promise((resolve) => client.on("message", ({ data }) => resolve(data)));
  client.subscribe(outputs.id);
  const data = await within(first, `message (viewer ${round})`);
  decode(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return { client, closed };
}

/** COUNT viewers in turn, each closed by the viewer; prints their close codes. */
async function inTurn(url, count) {
  const started = Date.now();
  const codes = {};
  for (let round = 0; round < count; round += 1) {
    const { client, closed } = await viewer(url, round);
    client.close();
    const code = await within(closed, `close (viewer ${round})`);
    codes[code] = (codes[code] ?? 0) + 1;
    if (code !== 1000 && code !== 1005) {
      fail(`viewer ${round}: its close ended with ${code}, not 1000 or 1005`);
    }
  }
  print({ event: "summary", clients: count, codes, milliseconds: Date.now() - started });
}

/** One viewer that stays until the server goes away, which must say so with 1001. */
async function hold(url) {
  const last = await viewer(url, "held");
  print({ event: "holding" });
  const code = await within(last.closed, "close from the server");
  print({ event: "server closed", code });
  if (code !== 1001) {
    fail(`the server's shutdown ended the session with ${code}, not 1001`);
  }
}

async function main() {
  const [url] = process.argv.slice(2);
  if (!url) {
    fail("usage: view_clients.js ws://HOST:PORT, then `viewers N` or `hold` on stdin");
  }
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const [command, count] = line.split(" ");
    if (command === "viewers" && Number(count) > 0) {
      await inTurn(url, Number(count));
    } else if (command === "hold") {
      await hold(url);
      return;
    } else {
      fail(`unknown command ${JSON.stringify(line)}`);
    }
  }
}

main()
  .then(() => process.exit(0))
  .catch((e) => fail(e.stack ?? String(e)));
