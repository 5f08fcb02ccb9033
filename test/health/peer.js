#!/usr/bin/env node
// A real gRPC server (@grpc/grpc-js) playing the NVSentinel platform
// connector for gpuready's health-event tests (test/health/test_health_peer.c).
//
// usage: node peer.js CONFIG.json
//
// CONFIG:
//   proto         path to src/health/proto/health_event.proto (the same file
//                 the C client is generated from)
//   includeDirs   where google/protobuf/*.proto live (default ["/usr/include"])
//   listen        "unix:/path/to.sock" or "tcp" (127.0.0.1, port chosen by the OS)
//   tls           {cert, key}: serve TLS with these PEM files (tcp only)
//   delayListenMs bind only after this long (a socket that appears late)
//   records       file that gets one JSON line per received call:
//                 {n, metadata: {name: [values]}, request: <decoded, defaults
//                 included, enums as names, int64 as strings>, raw: <base64>,
//                 deadlineMs: <ms left of the client's deadline or null>}
//   responses     list of {code: "OK"|"UNAVAILABLE"|…, message, delayMs},
//                 used in order; the last one repeats. Default [{code: "OK"}].
//
// On stdout it prints one line {"ready":true,"port":N} once it listens. It
// exits on SIGTERM.
'use strict';

const fs = require('fs');
const path = require('path');
const modules = path.join(__dirname, '..', 'node', 'node_modules');
const grpc = require(path.join(modules, '@grpc', 'grpc-js'));
const protoLoader = require(path.join(modules, '@grpc', 'proto-loader'));

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const pkgDef = protoLoader.loadSync(cfg.proto, {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  arrays: true,
  includeDirs: cfg.includeDirs || ['/usr/include'],
});
const svc = pkgDef['datamodels.PlatformConnector'];
if (!svc || !svc.HealthEventOccurredV1) {
  console.error('peer: datamodels.PlatformConnector/HealthEventOccurredV1 not in the proto');
  process.exit(2);
}
const method = svc.HealthEventOccurredV1;
if (method.path !== '/datamodels.PlatformConnector/HealthEventOccurredV1') {
  console.error('peer: unexpected method path ' + method.path);
  process.exit(2);
}
// Keep the raw request bytes too: deserialize ourselves in the handler.
const rawDef = {
  HealthEventOccurredV1: Object.assign({}, method, { requestDeserialize: (b) => b }),
};

const responses = cfg.responses && cfg.responses.length ? cfg.responses : [{ code: 'OK' }];
let n = 0;

function handler(call, callback) {
  const idx = n++;
  const raw = call.request;
  let request = null;
  let decodeError = null;
  try {
    request = method.requestDeserialize(raw);
  } catch (e) {
    decodeError = String(e);
  }
  const deadline = call.getDeadline();
  const deadlineMs =
    deadline instanceof Date ? deadline.getTime() - Date.now() : (isFinite(deadline) ? deadline - Date.now() : null);
  const rec = {
    n: idx,
    metadata: call.metadata.toJSON(),
    request,
    decodeError,
    raw: Buffer.from(raw).toString('base64'),
    deadlineMs,
  };
  fs.appendFileSync(cfg.records, JSON.stringify(rec) + '\n');
  const r = responses[Math.min(idx, responses.length - 1)];
  const reply = () => {
    const code = r.code || 'OK';
    if (code === 'OK') {
      callback(null, {});
    } else {
      callback({ code: grpc.status[code], details: r.message || '' });
    }
  };
  if (r.delayMs) setTimeout(reply, r.delayMs);
  else reply();
}

const server = new grpc.Server();
server.addService(rawDef, { HealthEventOccurredV1: handler });

let creds = grpc.ServerCredentials.createInsecure();
if (cfg.tls) {
  creds = grpc.ServerCredentials.createSsl(
    null,
    [{ private_key: fs.readFileSync(cfg.tls.key), cert_chain: fs.readFileSync(cfg.tls.cert) }],
    false,
  );
}

function listen() {
  const addr = cfg.listen === 'tcp' ? '127.0.0.1:0' : cfg.listen;
  server.bindAsync(addr, creds, (err, port) => {
    if (err) {
      console.error('peer: bind ' + addr + ': ' + err.message);
      process.exit(2);
    }
    process.stdout.write(JSON.stringify({ ready: true, port }) + '\n');
  });
}

process.on('SIGTERM', () => {
  server.forceShutdown();
  process.exit(0);
});

if (cfg.delayListenMs) setTimeout(listen, cfg.delayListenMs);
else listen();
