// Loaded with `node --require` into the `next start` / `next dev` process (lib/cli/next-server-args.ts).
// Some requests never reach a route, the proxy or instrumentation: Node's HTTP parser refuses
// headers over its 16 KiB limit (431) and method names it does not know (400), with an empty
// answer; Next.js answers WebDAV-style methods (PROPFIND, LOCK…) with an empty 400 and TRACE with
// a plain-text 500 (the web Request it builds refuses that method). Here the one HTTP server
// `next start` creates gets a problem+json answer for each, like every other error:
// - a method outside GET, HEAD, OPTIONS, POST, PUT, PATCH and DELETE: 501 `unsupported-method`
//   (RFC 9110 §9.1: a method no resource of the server serves), CONNECT included;
// - a request Node cannot parse: 431 `request-header-too-large`, 408 `request-timeout`, 413
//   `payload-too-large` (chunk extensions over Node's limit), 501 for a method name it does not
//   know, else 400 `invalid-request`; each with `Connection: close`, and the socket destroyed once
//   the answer is written, as Node's own handler does (the rest of the stream cannot be trusted,
//   and a slow client that ran out of time must not keep its socket).
// Plain CommonJS because it runs before anything is compiled; the bodies match problemBody() in
// lib/http/problem.ts, which test/unit/front-door.test.ts holds them to.
"use strict";

const http = require("node:http");

const SERVED = new Set(["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"]);
const SERVED_TEXT = "GET, HEAD, OPTIONS, POST, PUT, PATCH and DELETE";
const BEFORE_ROUTING = "(before routing)";

const PROBLEMS = {
  "invalid-request": { status: 400, title: "The request is not valid" },
  "request-timeout": { status: 408, title: "Request not received in time" },
  "payload-too-large": { status: 413, title: "Request body too large" },
  "request-header-too-large": { status: 431, title: "Request header fields too large" },
  "unsupported-method": { status: 501, title: "Method not supported by this server" },
};

const REASONS = { 400: "Bad Request", 408: "Request Timeout", 413: "Payload Too Large", 431: "Request Header Fields Too Large", 501: "Not Implemented" };

function problemText(code, detail) {
  const { status, title } = PROBLEMS[code];
  return JSON.stringify({ type: `urn:tollgate:problem:${code}`, title, status, detail, code });
}

// What Node's parser refused, by its error code (llhttp's HPE_* codes, Node's own for timeouts).
// An unknown method is a 501 only when the bytes look like a request line (a token of capitals,
// then a space); anything else there (a TLS handshake on the plain port) is not HTTP at all.
function parseFailure(error) {
  switch (error && error.code) {
    case "HPE_HEADER_OVERFLOW":
      return ["request-header-too-large", "The request's header fields exceed 16 KiB in all; send fewer or shorter headers."];
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return ["request-timeout", "The request was not received in full in time."];
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return ["payload-too-large", "The request's chunk extensions exceed the server's limit."];
    case "HPE_INVALID_METHOD":
      if (/^[A-Z][A-Z_-]* /.test(String(error.rawPacket ?? "").slice(0, 40))) {
        return ["unsupported-method", `This server serves ${SERVED_TEXT}.`];
      }
      return ["invalid-request", "The request is not valid HTTP/1.1."];
    default:
      return ["invalid-request", "The request is not valid HTTP/1.1."];
  }
}

// For operators: the counter and logger the routes use. The app makes its metrics on first use;
// refusals before that wait on globalThis and lib/metrics/registry.ts adds them when it does.
function record(status, detail) {
  const metrics = globalThis.tollgateMetrics;
  if (metrics) metrics.httpRequests.inc({ route: BEFORE_ROUTING, status: String(status) });
  else {
    const pending = (globalThis.tollgateRefusedBeforeMetrics ??= {});
    pending[status] = (pending[status] ?? 0) + 1;
  }
  const logger = globalThis.tollgateLog;
  if (logger) logger.warn({ status, detail }, "request refused before routing");
}

// Written raw (there is no response object here), then the socket destroyed: http.Server keeps
// connections half-open, so an end() alone would leave it open for as long as the client likes.
function answerAndClose(socket, status, text) {
  // A client that reads nothing cannot hold it either.
  const timer = setTimeout(() => socket.destroy(), 5_000).unref();
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: application/problem+json\r\n` +
      `Content-Length: ${Buffer.byteLength(text)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${text}`,
    () => {
      clearTimeout(timer);
      socket.destroy();
    },
  );
}

function onClientError(error, socket) {
  // Nothing can be answered on a socket that is gone, or once an answer has begun on it.
  const inFlight = socket._httpMessage;
  if (error.code === "ECONNRESET" || !socket.writable || (inFlight && inFlight.headersSent)) {
    socket.destroy(error);
    return;
  }
  const [code, detail] = parseFailure(error);
  const status = PROBLEMS[code].status;
  record(status, error.code);
  answerAndClose(socket, status, problemText(code, detail));
}

function refuseMethod(res, method) {
  const text = problemText("unsupported-method", `${method} is not served by this server; it serves ${SERVED_TEXT}.`);
  record(501, method);
  res.writeHead(501, {
    "content-type": "application/problem+json",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
  });
  res.end(text);
}

// Node hands a CONNECT's socket over without its own error listener: one is needed here, or a
// client that resets the connection would raise an uncaught error in the server process.
function onConnect(req, socket) {
  socket.on("error", () => socket.destroy());
  record(501, "CONNECT");
  answerAndClose(socket, 501, problemText("unsupported-method", `CONNECT is not served by this server; it serves ${SERVED_TEXT}.`));
}

function guard(listener) {
  return function guardedRequest(req, res) {
    if (!SERVED.has(req.method)) return refuseMethod(res, req.method);
    return listener.call(this, req, res);
  };
}

const createServer = http.createServer;
http.createServer = function createGuardedServer(...args) {
  const at = args.findIndex((a) => typeof a === "function");
  if (at >= 0) args[at] = guard(args[at]);
  const server = createServer.apply(this, args);
  server.on("clientError", onClientError);
  server.on("connect", onConnect);
  return server;
};

module.exports = { PROBLEMS, problemText, parseFailure, SERVED, BEFORE_ROUTING, onClientError, onConnect };
