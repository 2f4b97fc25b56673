// An rtde MCAP recording read as Foxglove reads one: @mcap/core's reader, with
// @mcap/support's decompressors and protobuf descriptors. Every channel is decoded with
// the file's own schema record, whatever the topic: a message that does not decode, or a
// channel without a schema, is an error. Then:
// - `/rtde/outputs` must hold, in order, exactly the values of EXPECTED (one JSON object
//   per line, by field name; 64-bit integers as strings);
// - `/tf`, when the file has it, must chain to the `actual_TCP_pose` recorded with the
//   same package (and match `/tcp_pose`, when the file has that too).
//
//   node read_mcap.js RECORDING.mcap EXPECTED.jsonl
//
// Prints one JSON line for rtde-view/tests/foxglove_typescript.rs:
//   {"event":"summary","counts":{TOPIC:N},"schemas":{TOPIC:"ENCODING NAME"},
//    "outputs_compared":N,"frames_checked":N}
// Exits 1, saying why on stderr, on anything else.

"use strict";

const fs = require("fs");
const { McapStreamReader } = require("@mcap/core");
const { loadDecompressHandlers } = require("@mcap/support");
const { decoderFor } = require("./decode");
const { checkFrames } = require("./frames");

function fail(message) {
  process.stderr.write(`read_mcap.js: ${message}\n`);
  process.exit(1);
}

/** Whether a decoded value is the expected one, to the bit for doubles. */
function same(expected, got) {
  if (Array.isArray(expected)) {
    return Array.isArray(got) && got.length === expected.length && expected.every((e, i) => same(e, got[i]));
  }
  if (expected === null) {
    // JSON has no NaN or infinity: rtde writes them as null.
    return typeof got === "number" && !Number.isFinite(got);
  }
  if (typeof expected === "number" && typeof got === "string") {
    if (!Number.isSafeInteger(expected)) {
      throw new Error(`expected ${expected} cannot be compared exactly: write it as a string`);
    }
    return BigInt(got) === BigInt(expected);
  }
  return Object.is(expected, got);
}

function compareOutputs(expected, got, index) {
  if (expected === undefined) {
    throw new Error(`/rtde/outputs message ${index}: more messages than the ${index} expected`);
  }
  const keys = Object.keys(expected);
  const extra = Object.keys(got).filter((k) => !(k in expected));
  if (extra.length > 0) {
    throw new Error(`/rtde/outputs message ${index}: fields not expected: ${extra.join(", ")}`);
  }
  for (const key of keys) {
    if (!same(expected[key], got[key])) {
      throw new Error(
        `/rtde/outputs message ${index}: ${key} is ${JSON.stringify(got[key])}, expected ${JSON.stringify(expected[key])}`,
      );
    }
  }
}

async function main() {
  const [path, expectedPath] = process.argv.slice(2);
  if (!path || !expectedPath) {
    fail("usage: read_mcap.js RECORDING.mcap EXPECTED.jsonl");
  }
  const expected = fs
    .readFileSync(expectedPath, "utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line));

  const reader = new McapStreamReader({ decompressHandlers: await loadDecompressHandlers() });
  reader.append(fs.readFileSync(path));
  const schemas = new Map();
  const channels = new Map();
  const counts = {};
  const described = {};
  // Per log time, the messages of one package that the frames are checked against.
  const packages = new Map();
  let outputs = 0;
  let framesChecked = 0;
  const channelsByTopic = new Set();
  const checkPackage = (key) => {
    const pkg = packages.get(key);
    if (pkg["/tf"] && pkg.pose && (!channelsByTopic.has("/tcp_pose") || pkg["/tcp_pose"])) {
      checkFrames(pkg["/tf"].transforms, pkg.pose, pkg["/tcp_pose"]);
      framesChecked += 1;
      packages.delete(key);
    }
  };
  for (let record; (record = reader.nextRecord()); ) {
    switch (record.type) {
      case "Schema":
        schemas.set(record.id, record);
        break;
      case "Channel": {
        // The summary section at the end repeats the channels.
        if (channels.has(record.id)) {
          break;
        }
        const schema = schemas.get(record.schemaId);
        if (schema === undefined) {
          throw new Error(`channel ${record.topic} has no schema (schema id ${record.schemaId})`);
        }
        channels.set(record.id, {
          topic: record.topic,
          decode: decoderFor({
            messageEncoding: record.messageEncoding,
            schemaEncoding: schema.encoding,
            schemaName: schema.name,
            schema: schema.data,
          }),
        });
        channelsByTopic.add(record.topic);
        counts[record.topic] = 0;
        described[record.topic] = `${schema.encoding} ${schema.name}`;
        break;
      }
      case "Message": {
        const channel = channels.get(record.channelId);
        if (channel === undefined) {
          throw new Error(`a message on channel ${record.channelId}, which was never described`);
        }
        let message;
        try {
          message = channel.decode(record.data);
        } catch (e) {
          throw new Error(`${channel.topic} at ${record.logTime}: ${e.message}`);
        }
        counts[channel.topic] += 1;
        const key = record.logTime.toString();
        if (channel.topic === "/rtde/outputs") {
          compareOutputs(expected[outputs], message, outputs);
          outputs += 1;
          if (message.actual_TCP_pose !== undefined) {
            packages.set(key, { ...packages.get(key), pose: message.actual_TCP_pose });
            checkPackage(key);
          }
        } else if (channel.topic === "/tf" || channel.topic === "/tcp_pose") {
          packages.set(key, { ...packages.get(key), [channel.topic]: message });
          checkPackage(key);
        }
        break;
      }
      default:
        break;
    }
  }
  if (!reader.done()) {
    throw new Error(`the file ends without its footer (${reader.bytesRemaining()} bytes unread)`);
  }
  if (outputs !== expected.length) {
    throw new Error(`${outputs} /rtde/outputs messages, ${expected.length} expected`);
  }
  if ((counts["/tf"] ?? 0) !== framesChecked) {
    throw new Error(`${counts["/tf"]} /tf messages, ${framesChecked} with a recorded TCP pose to check against`);
  }
  process.stdout.write(
    `${JSON.stringify({
      event: "summary",
      counts,
      schemas: described,
      outputs_compared: outputs,
      frames_checked: framesChecked,
    })}\n`,
  );
}

main().catch((e) => fail(e.stack ?? String(e)));
