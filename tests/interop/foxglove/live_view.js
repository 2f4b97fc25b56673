// rtde's live view watched by Foxglove's own client, @foxglove/ws-protocol's
// FoxgloveClient over `ws`: every advertised channel subscribed and every message decoded
// with the channel's own schema, the link frames checked against the TCP pose the
// controller sent, then the two ends of a session: the viewer closing (it must see 1000 or
// 1005, not 1006) and, for a second viewer, the server shutting down (1001).
//
//   node live_view.js ws://127.0.0.1:PORT PACKAGES
//
// Prints JSON lines for rtde-view/tests/foxglove_typescript.rs:
//   {"event":"summary", ...}   after PACKAGES packages with every channel, and the first close
//   {"event":"holding"}        a second viewer is connected: shut the server down now
//   {"event":"server closed","code":N}
// Exits 1, saying why on stderr, on anything else.

"use strict";

const { FoxgloveClient } = require("@foxglove/ws-protocol");
const WebSocket = require("ws");
const { decoderFor } = require("./decode");
const { checkFrames } = require("./frames");

const TOPICS = ["/rtde/outputs", "/rtde/gaps", "/tf", "/tcp_pose", "/rtde/modes"];
/** The topics every package of the recipe carries. */
const PER_PACKAGE = ["/rtde/outputs", "/tf", "/tcp_pose", "/rtde/modes"];
const TIMEOUT_MS = 30_000;
/** Packages whose timestamp and actual_q are printed for the test to hold to the motion law. */
const SAMPLES = 20;

function fail(message) {
  process.stderr.write(`live_view.js: ${message}\n`);
  process.exit(1);
}

function print(line) {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/** A viewer: Foxglove's client on a socket offering the protocol's subprotocol. */
function connect(url) {
  const ws = new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
  const client = new FoxgloveClient({ ws });
  client.on("error", (e) => fail(`client error: ${e.message ?? e}`));
  const closed = new Promise((resolve) => client.on("close", (event) => resolve(event.code)));
  const advertised = new Promise((resolve) => client.on("advertise", resolve));
  return { client, closed, advertised };
}

function within(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Subscribes to every topic; resolves once `packages` packages carried every channel and a gap came. */
async function watch(viewer, wanted) {
  const channels = await within(viewer.advertised, "advertise");
  const byTopic = new Map(channels.map((c) => [c.topic, c]));
  const missing = TOPICS.filter((t) => !byTopic.has(t));
  if (missing.length > 0) {
    fail(`not advertised: ${missing.join(", ")}`);
  }
  const subscriptions = new Map();
  for (const topic of TOPICS) {
    const channel = byTopic.get(topic);
    const decode = decoderFor({
      messageEncoding: channel.encoding,
      schemaEncoding: channel.schemaEncoding,
      schemaName: channel.schemaName,
      schema: channel.schema,
    });
    subscriptions.set(viewer.client.subscribe(channel.id), { topic, decode });
  }
  const counts = Object.fromEntries(TOPICS.map((t) => [t, 0]));
  const packages = new Map();
  const complete = [];
  return within(
    new Promise((resolve) => {
      viewer.client.on("message", ({ subscriptionId, timestamp, data }) => {
        const { topic, decode } = subscriptions.get(subscriptionId) ?? fail(`subscription ${subscriptionId}?`);
        let message;
        try {
          message = decode(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
        } catch (e) {
          fail(`${topic} at ${timestamp}: ${e.message}`);
        }
        counts[topic] += 1;
        if (topic === "/rtde/gaps") {
          return;
        }
        const key = timestamp.toString();
        const pkg = packages.get(key) ?? {};
        pkg[topic] = message;
        packages.set(key, pkg);
        if (PER_PACKAGE.every((t) => t in pkg)) {
          packages.delete(key);
          complete.push(pkg);
          if (complete.length >= wanted && counts["/rtde/gaps"] > 0) {
            resolve({ counts, complete });
          }
        }
      });
    }),
    `${wanted} whole packages and a gap`,
  );
}

async function main() {
  const [url, wantedText] = process.argv.slice(2);
  const wanted = Number(wantedText);
  if (!url || !(wanted > 0)) {
    fail("usage: live_view.js ws://HOST:PORT PACKAGES");
  }

  const viewer = connect(url);
  const { counts, complete } = await watch(viewer, wanted);
  let largest = { position: 0, rotation: 0, pose: 0 };
  const modes = new Set();
  for (const pkg of complete) {
    const outputs = pkg["/rtde/outputs"];
    const seen = checkFrames(pkg["/tf"].transforms, outputs.actual_TCP_pose, pkg["/tcp_pose"]);
    largest = Object.fromEntries(Object.keys(largest).map((k) => [k, Math.max(largest[k], seen[k])]));
    const names = pkg["/rtde/modes"];
    modes.add(JSON.stringify(["robot_mode", outputs.robot_mode, names.robot_mode]));
    modes.add(JSON.stringify(["safety_mode", outputs.safety_mode, names.safety_mode]));
  }
  viewer.client.close();
  const clientClose = await within(viewer.closed, "close after the viewer's Close");
  print({
    event: "summary",
    subprotocol: FoxgloveClient.SUPPORTED_SUBPROTOCOL,
    counts,
    frames_checked: complete.length,
    largest_difference: largest,
    modes: [...modes].map((m) => JSON.parse(m)),
    samples: complete.slice(0, SAMPLES).map((p) => [p["/rtde/outputs"].timestamp, p["/rtde/outputs"].actual_q]),
    client_close: clientClose,
  });
  if (clientClose !== 1000 && clientClose !== 1005) {
    fail(`the viewer's close ended with ${clientClose}, not 1000 or 1005`);
  }

  const second = connect(url);
  await within(second.advertised, "advertise to the second viewer");
  print({ event: "holding" });
  const serverClose = await within(second.closed, "close from the server");
  print({ event: "server closed", code: serverClose });
  if (serverClose !== 1001) {
    fail(`the server's shutdown ended the session with ${serverClose}, not 1001`);
  }
}

main().catch((e) => fail(e.stack ?? String(e)));
