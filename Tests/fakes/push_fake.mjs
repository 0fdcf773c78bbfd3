#!/usr/bin/env node
// Fake push providers for the push sender's tests: Google OAuth token endpoint, FCM HTTP v1 and APNs, all on one
// HTTP/2-over-TLS server on 127.0.0.1 (plus, with --sandbox-port, a second one acting as the APNs sandbox), and a
// plain HTTP/1.1 JSON control API on 127.0.0.1.
// Node.js built-ins only (node:http2, node:http, node:crypto, node:fs, node:util). Loopback only.
//
//   node Tests/fakes/push_fake.mjs --dir DIR [--port 0] [--sandbox-port 0] [--control-port 0] [--ready-file PATH]
//        [--apns-key-id TESTKEY123] [--team-id TEAM123456] [--bundle-id org.example.htcommander]
//        [--max-seconds N] [--no-parent-watch] [--verbose]
//
// DIR comes from Tests/fakes/make_push_credentials.sh (server.pem, server-key.pem, service-account.json,
// service-account-public.pem, apns-public.pem). After its ports are bound the fake prints one line
// {"port":N,"control_port":M} (plus "sandbox_port":S with --sandbox-port) on stdout and writes the same line to
// --ready-file (atomically: tmp + rename).
// SIGTERM or SIGINT: closes everything and exits 0 (forced after 2 s). It also exits 0 when its parent process
// disappears (checked every second; --no-parent-watch turns this off) and after --max-seconds if given.
//
// ---------------------------------------------------------------------------------------------------------------
// HTTP/2 server (TLS, ALPN h2 only, SETTINGS_MAX_CONCURRENT_STREAMS 100 like FCM; connections kept open, no idle
// timeout). Roles by path:
//
// oauth  POST /token   content-type application/x-www-form-urlencoded,
//        grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<JWT>
//        JWT checks (in this order): three base64url segments without padding; header alg RS256, typ JWT,
//        kid = service-account.json private_key_id; RS256 signature against service-account-public.pem;
//        iss = client_email; aud = token_uri of service-account.json (re-read per request) or the URL the request
//        was sent to (https://<:authority>/token) or settings.tokenUri; scope contains
//        https://www.googleapis.com/auth/firebase.messaging; iat within ±skewMs of now; exp > now; exp > iat;
//        exp ≤ iat + 3600.
//        200 {"access_token":"ya29.fake-N","expires_in":<tokenLifetime>,"token_type":"Bearer"}
//        400 {"error":"invalid_grant","error_description":"..."}  (signature, kid, iss, aud, times, malformed JWT)
//        400 {"error":"invalid_scope",...}  (scope missing/wrong: Google's answer for that case)
//        400 {"error":"unsupported_grant_type",...} / {"error":"invalid_request",...} (bad form / content-type)
//
// fcm    POST /v1/projects/{project}/messages:send   authorization: Bearer <access token issued here, not expired>
//        401 {"error":{"code":401,"message":"Request had invalid authentication credentials.",
//             "status":"UNAUTHENTICATED"}}  + www-authenticate header; NO FcmError detail.
//        403 PERMISSION_DENIED (no FcmError) when {project} is not the service account's project_id.
//        400 INVALID_ARGUMENT for: content-type not JSON; invalid JSON; top-level keys other than message /
//            validate_only; unknown fields in message, message.notification, message.android,
//            message.android.notification (snake_case or lowerCamel accepted, as proto JSON does); non-string
//            values of string fields; no message.token (or topic/condition: this project only sends to tokens);
//            message.token not matching [A-Za-z0-9_:.-]{1,4096} (carries a google.rpc.BadRequest fieldViolation
//            on "message.token"); data values not all strings (also android.data); reserved data keys (from,
//            notification, message_type, collapse_key, prefixes google / gcm, case-insensitive);
//            android.ttl not like "86400s" / "3.5s"; android.priority not normal/high; the `message` object,
//            re-serialized compactly (JSON.stringify, UTF-8), larger than 4096 bytes ("Android message is too
//            big"). FCM's real limit is 4096 bytes of payload; measuring the whole compact message is stricter
//            and deterministic. The record carries messageBytes.
//        Error body: {"error":{"code":C,"message":M,"status":S,"details":[
//            {"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":E},
//            {"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":F,"description":M}]}]}}
//        (JSON parse / type errors carry only the BadRequest detail, like Google's front end.)
//        200 {"name":"projects/{project}/messages/0:<n>"}   (validate_only: .../messages/fake_message_id)
//
// apns   POST /3/device/{hex token}   checks, in order (status reason):
//        405 MethodNotAllowed; 400 MissingDeviceToken; 403 MissingProviderToken (no authorization);
//        403 InvalidProviderToken (not "bearer <JWT>", malformed, alg ≠ ES256, kid ≠ apnsKeyId, claims other than
//            exactly iss + iat, iss ≠ teamId, iat not an integer or in the future beyond skewMs, signature not a
//            raw r‖s 64-byte ES256 signature valid for apns-public.pem — a DER signature fails here);
//        403 ExpiredProviderToken (iat older than 3600 s);
//        429 TooManyProviderTokenUpdates (a JWT never seen before for this kid, less than 20 min after the kid's
//            previous new JWT; tokens already accepted stay valid; the first new JWT after the fake answered
//            Expired/InvalidProviderToken for that kid is exempt; settings.enforceTokenUpdateRate=false disables);
//        400 MissingTopic / BadTopic (apns-topic ≠ bundleId); 400 InvalidPushType (apns-push-type missing or not an
//            Apple push type — the fake requires the header; Apple infers it in some cases);
//        400 BadPriority (apns-priority not 10, 5 or 1); 400 BadExpirationDate (apns-expiration not digits);
//        400 BadCollapseId (> 64 bytes); 400 BadMessageId (apns-id not a UUID); 400 BadDeviceToken (token not even-
//            length hex of 64..200 digits); 400 PayloadEmpty; 413 PayloadTooLarge (> 4096 bytes);
//        400 BadPayload (not a JSON object with an "aps" object — Apple does not document this reason).
//        Errors: status + {"reason":R} (+ "timestamp" ms for 410), header apns-id. Success: 200, header apns-id
//        (echoed or generated), empty body. Every request records the JWT it used (raw + decoded).
//        Environments: --port is APNs production, --sandbox-port APNs sandbox (both also serve FCM and OAuth; they
//        share records, scripts and settings). A token registered for one environment (POST /control/tokens) is
//        refused by the other with 400 BadDeviceToken, as Apple does, right after the hex check above; a token
//        registered for neither is accepted by both (settings.apnsStrictTokens: refused by both).
//
// other paths: 404 (role "unknown"; APNs-style {"reason":"BadPath"} under /3/, Google-style otherwise).
//
// Notes for the sender's tests:
// - libcurl shares one connection per host:port. To keep FCM and APNs on separate connections (as with the real
//   hosts), use https://127.0.0.1:PORT for one and https://localhost:PORT for the other (the certificate has both).
// - ES256 signatures are randomized: every signing gives a different JWT, even within one second, so signing per
//   request shows up as many distinct jwt.raw values (stats.apnsJwts) and as 429 TooManyProviderTokenUpdates.
// - A scripted answer (status ≠ 200, or a body/html) replaces validation entirely; the record still says whether
//   the credentials were valid (authOk/authError), without updating the APNs token-update state.
// - Node's HTTP/2 (nghttp2 inside Node 20) ends a session with GOAWAY INTERNAL_ERROR after about 1000 RST_STREAM
//   frames from the client (rapid-reset protection, CVE-2023-44487; Node 20 has no option to lift it), and streams
//   in flight then are refused. libcurl 7.88 sends RST_STREAM(STREAM_CLOSED) after nearly every finished stream, so
//   here one connection carries about 1000 requests. A real provider with the same protection would do the same;
//   Tests/bench/push_sink.c lifts the limit (and counts the resets) to measure the sender on one connection.
// - Scripting is per token through the control API (no naming convention: tokens stay realistic). To make one
//   device's token dead:  POST /control/script {"role":"fcm","token":"tok-1","answer":"UNREGISTERED"}
//   Every other token keeps getting real answers. Named answers (`answer`), with the bodies the real services send:
//     fcm   UNREGISTERED (404), SENDER_ID_MISMATCH (403), INVALID_TOKEN_FIELD (400 INVALID_ARGUMENT, message
//           "Request contains an invalid argument.", BadRequest fieldViolation {field "message.token",
//           description "Invalid registration token"}), INVALID_TOKEN_MESSAGE (400 INVALID_ARGUMENT without any
//           fieldViolation, message "The registration token is not a valid FCM registration token": what FCM
//           answers today, see github.com/firebase/firebase-admin-java/issues/1064 and
//           github.com/healthjoy/async-firebase/issues/15), INVALID_ARGUMENT (400, "Request contains an invalid
//           argument.", no fieldViolation; add "field":"message.android.ttl" for a violation on another field),
//           QUOTA_EXCEEDED (429), UNAVAILABLE (503), INTERNAL (500), THIRD_PARTY_AUTH_ERROR (401 with FcmError),
//           UNAUTHENTICATED (401 without), PERMISSION_DENIED (403 without FcmError).
//     apns  any reason Apple documents, with its status: BadDeviceToken 400, Unregistered / ExpiredToken 410
//           (timestamp: default now; any JSON value, e.g. 1e300, -5, "soon"; timestampRaw: a literal JSON.stringify
//           cannot write, e.g. "1e400" or "123456789012345678901234567890"), DeviceTokenNotForTopic 400,
//           TooManyRequests 429, ExpiredProviderToken 403, Shutdown 503, ... (the table is ANSWERS.apns).
//     oauth invalid_grant, invalid_scope (400), invalid_client, unauthorized_client (401), internal_failure (500).
//           A 200 with an absurd lifetime: {"role":"oauth","expiresIn":-5} (any JSON value: 1e300, 3599.5,
//           "3599", null) or {"role":"oauth","expiresInRaw":"1e400"}; the token is still issued, and stays valid
//           for settings.tokenLifetime seconds whatever the answer says.
//   Garbage for fuzzing the sender's answer parsers: add "fuzz":SEED (an integer) to any entry; the body the answer
//   would have had (named, scripted or normal; an empty one counts as {}) is replaced by garbage made from it,
//   chosen by the seed: truncate, nonjson, binary, empty, bom, trailing, wrongType, hugeNumber (1e400, 2^64, -0,
//   ...), deep (17 to 10000 levels), longString (up to 300000 bytes), badString (lone surrogates, NUL, raw
//   control characters), duplicateKey; "fuzzKind" pins the kind. The status stays; an entry used several times
//   (times/persist) uses SEED, SEED+1, ... The record says what was sent: fuzz {seed, kind, path}, responseText
//   (or responseBase64 for binary).
//
// ---------------------------------------------------------------------------------------------------------------
// Control API: HTTP/1.1 on 127.0.0.1:<control_port>, JSON in and out. Errors: 400/404 {"ok":false,"error":...}.
//
// GET  /control/requests[?role=fcm&since=SEQ&token=T&environment=sandbox]  → {"requests":[record...],"dropped":D}
//      oldest first (token: the device token, case-insensitive for APNs). record =
//      {seq, role: "oauth"|"fcm"|"apns"|"unknown", method, path, headers (lowercased, incl. pseudo-headers, so
//       headers["apns-collapse-id"], ["apns-push-type"], ["apns-priority"], ["apns-expiration"], ["apns-topic"],
//       ["apns-id"]), body (parsed JSON: the FCM request {"message":...} or the APNs payload, so
//       body["gcm.message_id"]; a form object for oauth; text if not JSON), bodyBytes, deviceToken,
//       jwt: {raw, header, claims} (oauth: the assertion; apns: the authorization JWT), accessToken (fcm), authOk,
//       authError, messageBytes (fcm), scripted (the script entry used, named answers expanded, or null), status
//       (null while pending / if the client gave up), response (parsed body returned), responseText (the exact
//       body, when raw literals or fuzz made it), responseBase64 (binary fuzz), fuzz, responseHeaders, aborted,
//       at (ms epoch, arrival), answeredAt, sessionId, streamId, environment ("production" | "sandbox")}
// POST /control/clear [{"settings":true}]  → {"ok":true}   forgets records, scripts, token environments, counters (and with
//      settings:true also settings, issued access tokens and APNs token-update state).
// POST /control/script  → {"ok":true,"queued":N}   Queue scripted answers. Forms:
//      {"role":R,"token":T?,"responses":[resp,...]}  or  {"role":R,"token":T?,"times":N?,"persist":bool?,...resp}
//      R: oauth | fcm | apns | any. T: FCM message.token / APNs device token (case-insensitive); entries with a
//      token are used before role-wide ones; among equals, first queued first used. Each entry answers one request
//      (times N: N requests; persist: every request until clear). answer: a named answer (see the notes above),
//      expanded into the fields below; fields given next to it win. fuzz, fuzzKind: garbage (notes above).
//      resp fields: status (absent or 200 without body = answer normally, after the other effects), delayMs
//      (answer after this delay, capped at 120000), goaway (after answering, send GOAWAY and close the session),
//      reset (RST_STREAM INTERNAL_ERROR, no answer), retryAfter (retry-after header), headers ({name:value}),
//      body (raw body text, replaces the generated one), html (text/html Google-style error page),
//      fcm: errorCode (FcmError code; null = no FcmError detail; default by status: 400 INVALID_ARGUMENT,
//           403 SENDER_ID_MISMATCH, 404 UNREGISTERED, 429 QUOTA_EXCEEDED, 500 INTERNAL, 503 UNAVAILABLE; none for
//           401/502), message, field (adds a BadRequest fieldViolation on that field), fieldDescription (its
//           description; default the message);
//      apns: reason (default by status: 400 BadDeviceToken, 403 InvalidProviderToken, 405 MethodNotAllowed,
//           410 Unregistered, 413 PayloadTooLarge, 429 TooManyRequests, 500 InternalServerError,
//           503 ServiceUnavailable), timestamp (410: default now, ms; any JSON value), timestampRaw (a JSON literal
//           written as is);
//      oauth: error (default invalid_grant), errorDescription; expiresIn / expiresInRaw (on a 200: the
//           expires_in the answer claims).
// POST /control/tokens {"production":[T,...],"sandbox":[T,...]}  (either) → {"ok":true,"production":N,...}
//      APNs tokens of each environment (case-insensitive; a later call moves a token). Forgotten by clear.
// POST /control/set  {tokenLifetime, skewMs, clockOffsetMs, apnsKeyId, teamId, bundleId,
//      enforceTokenUpdateRate, apnsStreamGate, tokenUri, maxRecords, apnsStrictTokens}  (any subset)
//      → {"ok":true,"settings":{...}}
//      tokenLifetime: seconds for new access tokens (default 3599); skewMs: tolerance on iat (default 300000);
//      clockOffsetMs: the fake's clock minus real time (default 0; moves "now" for all time checks, so tests can
//      expire tokens or fake clock skew without sleeping); apnsStreamGate (default false): new sessions start
//      with SETTINGS_MAX_CONCURRENT_STREAMS 1, raised to 100 after the session's first 200 answer, like APNs
//      with token auth; maxRecords (default 50000): past it the oldest tenth is dropped (counters stay exact);
//      apnsStrictTokens (default false): a token not registered through /control/tokens is BadDeviceToken in both
//      environments.
// POST /control/revoke  → {"ok":true,"revoked":N}   every issued access token becomes invalid (next FCM → 401).
// POST /control/goaway  → {"ok":true,"sessions":N}  GOAWAY + close every open session now.
// GET  /control/stats  → {"byRole":{"fcm":{"total":T,"pending":P,"aborted":A,"byStatus":{"200":n,...}},...},
//      ("pending": not answered yet; "aborted": reset, or the client gave up before the answer),
//      "sessionsOpened","sessionsActive","maxConcurrentStreams" (most streams open at once on one session),
//      "goawaysSent","accessTokensIssued","apnsJwts" (distinct APNs JWTs seen),"recorded","dropped"}
// POST /control/wait  {"role":"fcm"|"any","count":N,"timeoutMs":5000,"status":200|"aborted"?,"answered":bool?}
//      → {"ok":true|false,"count":C}  when at least N matching requests (arrived; or answered; or answered with
//      that status; or aborted) have been recorded since the last clear, or at the timeout (capped at 60000) with
//      ok false. A clear answers pending waits with ok false.
// GET  /control/settings → {"settings":{...}}
// ---------------------------------------------------------------------------------------------------------------

import http2 from 'node:http2';
import http from 'node:http';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: {
    dir: { type: 'string' },
    port: { type: 'string', default: '0' },
    'sandbox-port': { type: 'string' },
    'control-port': { type: 'string', default: '0' },
    'ready-file': { type: 'string' },
    'apns-key-id': { type: 'string' },
    'team-id': { type: 'string' },
    'bundle-id': { type: 'string' },
    'max-seconds': { type: 'string' },
    'no-parent-watch': { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
  },
});
if (!opt.dir) {
  process.stderr.write('usage: push_fake.mjs --dir DIR [--port 0] [--control-port 0] [--ready-file PATH]\n');
  process.exit(2);
}
const DIR = opt.dir;
const log = (...a) => { if (opt.verbose) process.stderr.write(`push_fake: ${a.join(' ')}\n`); };

// ----- constants ---------------------------------------------------------------------------------------------
const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const MAX_BODY = 1 << 20;             // bytes kept per request body; more is counted, not kept
const APNS_MAX_PAYLOAD = 4096;
const FCM_MAX_MESSAGE = 4096;
const TOKEN_UPDATE_MIN_MS = 20 * 60 * 1000;
const APNS_JWT_MAX_AGE_MS = 60 * 60 * 1000;
const STREAM_BODY_TIMEOUT_MS = 60000; // a request body not finished by then is reset
const MAX_DELAY_MS = 120000;
const MAX_WAIT_MS = 60000;
const APNS_PUSH_TYPES = new Set(['alert', 'background', 'location', 'voip', 'complication', 'fileprovider', 'mdm',
  'liveactivity', 'pushtotalk', 'widgets', 'controls']);
const ROLES = ['oauth', 'fcm', 'apns', 'unknown'];

const DEFAULT_SETTINGS = () => ({
  tokenLifetime: 3599,
  skewMs: 300000,
  clockOffsetMs: 0,
  apnsKeyId: opt['apns-key-id'] ?? 'TESTKEY123',
  teamId: opt['team-id'] ?? 'TEAM123456',
  bundleId: opt['bundle-id'] ?? 'org.example.htcommander',
  enforceTokenUpdateRate: true,
  apnsStreamGate: false,
  tokenUri: null,
  maxRecords: 50000,
  apnsStrictTokens: false,
});

// ----- state -------------------------------------------------------------------------------------------------
let settings = DEFAULT_SETTINGS();
let records = [];
let dropped = 0;
let seq = 0;
let scripts = [];               // {role, token, resp, remaining}
let counters;                   // per role: {total, answered, byStatus:{}}
let sessionsOpened = 0;
let maxConcurrent = 0;
let goawaysSent = 0;
let accessTokensIssued = 0;
let fcmMessageCounter = 0;
let accessTokenCounter = 0;
const issued = new Map();       // access token -> expiresAt (fake clock ms)
let apnsKeyState = new Map();   // kid -> {since, seen:Set, allowNextChange}
let apnsJwts = new Set();
const sessions = new Set();
let sessionIdCounter = 0;
let waiters = [];

function resetCounters() {
  counters = Object.fromEntries(ROLES.map((r) => [r, { total: 0, answered: 0, aborted: 0, byStatus: {} }]));
}
resetCounters();

const now = () => Date.now() + settings.clockOffsetMs;

function readText(name) { return fs.readFileSync(path.join(DIR, name), 'utf8'); }
function serviceAccount() { return JSON.parse(readText('service-account.json')); }
let saPublicKey = null;
let apnsPublicKey = null;
function saKey() { return (saPublicKey ??= crypto.createPublicKey(readText('service-account-public.pem'))); }
function apnsKey() { return (apnsPublicKey ??= crypto.createPublicKey(readText('apns-public.pem'))); }

// ----- JWT ---------------------------------------------------------------------------------------------------
const B64URL = /^[A-Za-z0-9_-]+$/;
// Split and decode a compact JWS. Returns {raw, header, claims, signingInput, signature} or {error}.
function decodeJwt(raw) {
  if (typeof raw !== 'string') return { error: 'no JWT' };
  const parts = raw.split('.');
  if (parts.length !== 3) return { error: 'JWT must have three segments' };
  if (!parts.every((p) => B64URL.test(p))) return { error: 'JWT segments must be base64url without padding' };
  let header, claims;
  try {
    header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  } catch {
    return { error: 'JWT header or claims are not JSON' };
  }
  if (!isObj(header) || !isObj(claims)) return { error: 'JWT header or claims are not JSON objects' };
  return { raw, header, claims, signingInput: Buffer.from(`${parts[0]}.${parts[1]}`), signature: Buffer.from(parts[2], 'base64url') };
}
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const jwtRecord = (j) => (j && !j.error ? { raw: j.raw, header: j.header, claims: j.claims } : null);

// ----- HTTP/2 server -----------------------------------------------------------------------------------------
{
  const missing = ['server.pem', 'server-key.pem', 'service-account.json', 'service-account-public.pem', 'apns-public.pem']
    .filter((f) => !fs.existsSync(path.join(DIR, f)));
  if (missing.length) {
    process.stderr.write(`push_fake: ${DIR} lacks ${missing.join(', ')} (run Tests/fakes/make_push_credentials.sh ${DIR})\n`);
    process.exit(1);
  }
}
// One server per APNs environment: `production` on --port (also FCM and OAuth), `sandbox` on --sandbox-port when
// given. Both share every record, script, setting and counter; a record says which one took it (`environment`).
function makeServer(environment) {
  const srv = http2.createSecureServer({
    key: readText('server-key.pem'),
    cert: readText('server.pem'),
    allowHTTP1: false,
    settings: { maxConcurrentStreams: 100 },
    minVersion: 'TLSv1.2',
  });
  srv.on('session', (session) => {
    session.fakeId = ++sessionIdCounter;
    session.environment = environment;
    session.activeStreams = 0;
    session.gated = settings.apnsStreamGate;
    sessionsOpened++;
    sessions.add(session);
    log(`session ${session.fakeId} (${environment}) opened`);
    session.on('close', () => { sessions.delete(session); log(`session ${session.fakeId} closed`); });
    session.on('error', (e) => log(`session ${session.fakeId} error ${e.message}`));
  });
  srv.on('sessionError', (e) => log(`session error ${e.message}`));
  srv.on('tlsClientError', (e) => log(`tls error ${e.message}`));
  srv.on('unknownProtocol', (socket) => { log('client without ALPN h2'); socket.destroy(); });
  srv.on('stream', onStream);
  return srv;
}
const server = makeServer('production');
const sandboxServer = opt['sandbox-port'] !== undefined ? makeServer('sandbox') : null;
const servers = [server, sandboxServer].filter(Boolean);

function onStream(stream, headers) {
  const session = stream.session;
  session.activeStreams++;
  if (session.activeStreams > maxConcurrent) maxConcurrent = session.activeStreams;
  stream.on('close', () => { session.activeStreams--; });
  stream.on('error', (e) => log(`stream error ${e.message}`));
  const chunks = [];
  let size = 0;
  stream.on('data', (c) => { size += c.length; if (size <= MAX_BODY) chunks.push(c); });
  stream.setTimeout(STREAM_BODY_TIMEOUT_MS, () => {
    if (!stream.writableEnded && !stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
  });
  stream.on('end', () => {
    stream.setTimeout(0);
    try {
      handle(stream, headers, Buffer.concat(chunks), size);
    } catch (e) {
      process.stderr.write(`push_fake: internal error: ${e.stack}\n`);
      if (!stream.destroyed && !stream.headersSent) {
        stream.respond({ ':status': 500, 'content-type': 'text/plain' });
        stream.end(`fake internal error: ${e.message}`);
      }
    }
  });
}

function safeDecode(x) { try { return decodeURIComponent(x); } catch { return x; } }
function classify(p) {
  const pathOnly = p.split('?')[0];
  if (pathOnly === '/token') return { role: 'oauth' };
  let m = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(pathOnly);
  if (m) return { role: 'fcm', project: safeDecode(m[1]) };
  m = /^\/3\/device\/?(.*)$/.exec(pathOnly);
  if (m) return { role: 'apns', deviceToken: safeDecode(m[1]) };
  return { role: 'unknown', apnsStyle: pathOnly.startsWith('/3/') };
}

function handle(stream, headers, body, bodyBytes) {
  const method = headers[':method'];
  const p = headers[':path'] ?? '';
  const cls = classify(p);
  const session = stream.session;
  const rec = {
    seq: ++seq, role: cls.role, method, path: p,
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
    body: null, bodyBytes, deviceToken: null, jwt: null, accessToken: null, authOk: null, authError: null,
    messageBytes: null, scripted: null, status: null, response: null, responseHeaders: null, aborted: false,
    at: Date.now(), answeredAt: null, sessionId: session?.fakeId ?? null, streamId: stream.id,
    environment: session?.environment ?? 'production',
  };
  const text = body.toString('utf8');
  // Parse the body for the record (and for the handlers).
  let parsed;
  if (cls.role === 'oauth') {
    parsed = Object.fromEntries(new URLSearchParams(text));
    rec.body = parsed;
  } else {
    try { parsed = text.length ? JSON.parse(text) : undefined; } catch { parsed = undefined; }
    rec.body = parsed !== undefined ? parsed : (text.length ? text : null);
  }
  const ctx = { stream, headers, method, cls, text, parsed, bodyBytes, rec, session };
  if (cls.role === 'fcm') rec.deviceToken = isObj(parsed) && isObj(parsed.message) && typeof parsed.message.token === 'string' ? parsed.message.token : null;
  if (cls.role === 'apns') rec.deviceToken = cls.deviceToken;

  addRecord(rec);
  const script = takeScript(cls.role, rec.deviceToken);
  rec.scripted = script;
  log(`#${rec.seq} s${rec.sessionId}/${stream.id} ${method} ${p}${script ? ' (scripted)' : ''}`);

  const go = () => {
    if (stream.destroyed || stream.closed) { markAborted(rec); return; }
    if (script?.reset) {
      stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      markAborted(rec);
      return;
    }
    const useScript = script && script.status !== undefined && (script.status !== 200 || script.body !== undefined || script.html);
    if (useScript) peekAuth(ctx);
    let resp;
    switch (cls.role) {
      case 'oauth': resp = useScript ? scriptedOauth(script, ctx) : oauth(ctx); break;
      case 'fcm': resp = useScript ? scriptedFcm(script, ctx) : fcm(ctx); break;
      case 'apns': resp = useScript ? scriptedApns(script, ctx) : apns(ctx); break;
      default: resp = useScript ? scriptedGeneric(script) : notFound(cls); break;
    }
    if (script) {
      applyScriptExtras(resp, script, cls.role);
      if (script.fuzz !== undefined) applyFuzz(resp, script, rec, cls.role);
    }
    respond(stream, resp, rec);
    if (resp.status === 200 && session?.gated) {
      session.gated = false;
      try { session.settings({ maxConcurrentStreams: 100 }); } catch { /* session closing */ }
    }
    if (script?.goaway) {
      const sid = stream.id;
      const doGoaway = () => goaway(session, sid);
      if (stream.closed || stream.destroyed) doGoaway(); else stream.once('close', doGoaway);
    }
  };
  if (script?.delayMs) {
    const timer = setTimeout(go, Math.min(Math.max(0, Number(script.delayMs) || 0), MAX_DELAY_MS));
    // A client that gives up (timeout → RST_STREAM) during the delay is recorded at once.
    stream.once('close', () => { if (rec.status === null && !rec.aborted) { clearTimeout(timer); markAborted(rec); } });
  } else {
    go();
  }
}

// For scripted answers: record whether the request's credentials were valid, without side effects.
function peekAuth(ctx) {
  const { rec, headers, parsed, cls } = ctx;
  if (cls.role === 'oauth' && isObj(parsed) && parsed.assertion) {
    const v = verifyOauthJwt(parsed.assertion, headers);
    rec.jwt = v.jwt;
    rec.authOk = !v.error;
    rec.authError = v.error ?? null;
  } else if (cls.role === 'fcm') {
    const a = fcmBearer(headers);
    rec.accessToken = a.token;
    rec.authOk = !a.error;
    rec.authError = a.error;
  } else if (cls.role === 'apns') {
    const m = /^bearer\s+(\S+)$/i.exec(String(headers.authorization ?? ''));
    if (!m) { rec.authOk = false; rec.authError = 'authorization is not "bearer <JWT>"'; return; }
    const v = verifyApnsJwt(m[1]);
    rec.jwt = v.jwt;
    if (v.jwt) apnsJwts.add(v.jwt.raw);
    rec.authOk = !v.reason;
    rec.authError = v.reason ? v.detail : null;
  }
}

function goaway(session, lastStreamId = 0) {
  if (!session || session.destroyed || session.closed) return;
  try {
    session.goaway(http2.constants.NGHTTP2_NO_ERROR, lastStreamId);
    goawaysSent++;
    session.close();
    // Bounded: if the client keeps the socket, drop it.
    setTimeout(() => { if (!session.destroyed) session.destroy(); }, 5000).unref();
  } catch (e) { log(`goaway failed ${e.message}`); }
}

// The request got no answer: the client reset the stream (e.g. its timeout during a scripted delay) or a scripted
// reset. Its status stays null; stats count it under "aborted", not "pending".
function markAborted(rec) {
  if (rec.aborted) return;
  rec.aborted = true;
  rec.answeredAt = Date.now();
  counters[rec.role].aborted++;
  notify();
}

function respond(stream, resp, rec) {
  if (stream.destroyed || stream.closed) { markAborted(rec); return; }
  let payload;
  if (resp.bytes !== undefined) payload = resp.bytes;
  else if (resp.json !== undefined) payload = resp.raw ? serialize(resp.json) : JSON.stringify(resp.json);
  else payload = resp.text ?? '';
  const h = { ':status': resp.status, ...(resp.headers ?? {}) };
  if (resp.json !== undefined && !h['content-type']) h['content-type'] = 'application/json; charset=UTF-8';
  try {
    if (payload.length === 0) stream.respond(h, { endStream: true });
    else { stream.respond(h); stream.end(payload); }
  } catch (e) {
    log(`respond failed ${e.message}`);
    markAborted(rec);
    return;
  }
  rec.status = resp.status;
  if (Buffer.isBuffer(payload)) {
    rec.response = null;
    rec.responseBase64 = payload.toString('base64');
  } else {
    rec.response = resp.json ?? (payload !== '' ? payload : null);
    if (resp.raw || rec.fuzz) rec.responseText = payload;
  }
  rec.responseHeaders = resp.headers ?? {};
  rec.answeredAt = Date.now();
  const c = counters[rec.role];
  c.answered++;
  c.byStatus[resp.status] = (c.byStatus[resp.status] ?? 0) + 1;
  log(`#${rec.seq} -> ${resp.status}`);
  notify();
}

// ----- records, waiters ------------------------------------------------------------------------------------
function addRecord(rec) {
  records.push(rec);
  counters[rec.role].total++;
  const max = Math.max(1, settings.maxRecords | 0);
  // Drop in batches (a tenth of the cap) so a full log costs O(1) per request on average.
  if (records.length > max) { const n = records.length - max + Math.floor(max / 10); records.splice(0, n); dropped += n; }
  notify();
}

function countFor(role, status, answered) {
  const roles = !role || role === 'any' ? ROLES : [role];
  let n = 0;
  for (const r of roles) {
    const c = counters[r];
    if (!c) continue;
    if (status === 'aborted') n += c.aborted;
    else if (status !== undefined && status !== null) n += c.byStatus[status] ?? 0;
    else if (answered) n += c.answered;
    else n += c.total;
  }
  return n;
}

function notify() {
  if (waiters.length === 0) return;
  waiters = waiters.filter((w) => {
    const n = countFor(w.role, w.status, w.answered);
    if (n >= w.count) { clearTimeout(w.timer); w.resolve({ ok: true, count: n }); return false; }
    return true;
  });
}

// ----- scripts -----------------------------------------------------------------------------------------------
function sameToken(role, a, b) {
  if (a == null || b == null) return false;
  return role === 'apns' ? a.toLowerCase() === b.toLowerCase() : a === b;
}
function takeScript(role, token) {
  const matchesRole = (s) => s.role === role || s.role === 'any';
  let i = token != null ? scripts.findIndex((s) => matchesRole(s) && s.token != null && sameToken(role, s.token, token)) : -1;
  if (i < 0) i = scripts.findIndex((s) => matchesRole(s) && s.token == null);
  if (i < 0) return null;
  const s = scripts[i];
  const use = s.used++;
  if (!s.persist) { s.remaining--; if (s.remaining <= 0) scripts.splice(i, 1); }
  // A fuzzing entry used N times answers with seeds fuzz, fuzz+1, ... so each answer differs.
  return s.resp.fuzz !== undefined && use > 0 ? { ...s.resp, fuzz: s.resp.fuzz + use } : s.resp;
}
const SCRIPT_KEYS = new Set(['status', 'delayMs', 'goaway', 'reset', 'retryAfter', 'headers', 'body', 'html',
  'errorCode', 'message', 'field', 'fieldDescription', 'reason', 'timestamp', 'timestampRaw', 'error',
  'errorDescription', 'expiresIn', 'expiresInRaw', 'answer', 'fuzz', 'fuzzKind']);

// Named answers: `answer` expands into these fields (fields given next to it win). The FCM bodies are the ones
// Google sends (see the header comment for sources).
const ANSWERS = {
  fcm: {
    UNREGISTERED: { status: 404, errorCode: 'UNREGISTERED' },
    SENDER_ID_MISMATCH: { status: 403, errorCode: 'SENDER_ID_MISMATCH' },
    INVALID_TOKEN_FIELD: { status: 400, errorCode: 'INVALID_ARGUMENT', message: 'Request contains an invalid argument.', field: 'message.token', fieldDescription: 'Invalid registration token' },
    INVALID_TOKEN_MESSAGE: { status: 400, errorCode: 'INVALID_ARGUMENT', message: 'The registration token is not a valid FCM registration token' },
    INVALID_ARGUMENT: { status: 400, errorCode: 'INVALID_ARGUMENT', message: 'Request contains an invalid argument.' },
    QUOTA_EXCEEDED: { status: 429, errorCode: 'QUOTA_EXCEEDED' },
    UNAVAILABLE: { status: 503, errorCode: 'UNAVAILABLE' },
    INTERNAL: { status: 500, errorCode: 'INTERNAL' },
    THIRD_PARTY_AUTH_ERROR: { status: 401, errorCode: 'THIRD_PARTY_AUTH_ERROR' },
    UNAUTHENTICATED: { status: 401, errorCode: null },
    PERMISSION_DENIED: { status: 403, errorCode: null, message: 'The caller does not have permission' },
  },
  // Every reason Apple documents, with its status.
  apns: Object.fromEntries(Object.entries({
    400: ['BadCollapseId', 'BadDeviceToken', 'BadExpirationDate', 'BadMessageId', 'BadPriority', 'BadTopic',
      'DeviceTokenNotForTopic', 'DuplicateHeaders', 'IdleTimeout', 'InvalidPushType', 'MissingDeviceToken',
      'MissingTopic', 'PayloadEmpty', 'TopicDisallowed'],
    403: ['BadCertificate', 'BadCertificateEnvironment', 'ExpiredProviderToken', 'Forbidden', 'InvalidProviderToken',
      'MissingProviderToken', 'UnrelatedKeyIdInToken', 'BadEnvironmentKeyInToken'],
    404: ['BadPath'], 405: ['MethodNotAllowed'], 410: ['ExpiredToken', 'Unregistered'], 413: ['PayloadTooLarge'],
    429: ['TooManyProviderTokenUpdates', 'TooManyRequests'], 500: ['InternalServerError'],
    503: ['ServiceUnavailable', 'Shutdown'],
  }).flatMap(([status, reasons]) => reasons.map((reason) => [reason, { status: Number(status), reason }]))),
  oauth: {
    invalid_grant: { status: 400, error: 'invalid_grant', errorDescription: 'Invalid JWT Signature.' },
    invalid_scope: { status: 400, error: 'invalid_scope', errorDescription: 'Invalid OAuth scope or ID token audience provided.' },
    invalid_client: { status: 401, error: 'invalid_client', errorDescription: 'The OAuth client was not found.' },
    unauthorized_client: { status: 401, error: 'unauthorized_client', errorDescription: 'Client is unauthorized to retrieve access tokens using this method.' },
    internal_failure: { status: 500, error: 'internal_failure', errorDescription: 'Backend Error' },
  },
};

function checkScriptEntry(role, r) {
  const unknown = Object.keys(r).filter((k) => !SCRIPT_KEYS.has(k));
  if (unknown.length) throw new Error(`unknown script field(s) ${unknown.join(', ')}`);
  let entry = r;
  if (r.answer !== undefined) {
    const table = ANSWERS[role];
    if (!table) throw new Error(`answer needs role fcm, apns or oauth (got ${role})`);
    const preset = table[r.answer];
    if (!preset) throw new Error(`unknown ${role} answer ${JSON.stringify(r.answer)}; known: ${Object.keys(table).join(', ')}`);
    entry = { ...preset, ...r };
  }
  if (entry.status !== undefined && !(Number.isInteger(entry.status) && entry.status >= 100 && entry.status <= 599)) throw new Error(`bad status ${entry.status}`);
  if (entry.fuzz !== undefined && !Number.isSafeInteger(entry.fuzz)) throw new Error('fuzz must be an integer seed');
  if (entry.fuzzKind !== undefined && !FUZZ_KINDS.includes(entry.fuzzKind)) throw new Error(`unknown fuzzKind ${entry.fuzzKind}; known: ${FUZZ_KINDS.join(', ')}`);
  for (const k of ['timestampRaw', 'expiresInRaw']) {
    if (entry[k] !== undefined && (typeof entry[k] !== 'string' || entry[k].length === 0)) throw new Error(`${k} must be a non-empty string (a JSON literal)`);
  }
  return entry;
}

function addScript(body) {
  if (!isObj(body)) throw new Error('script must be a JSON object');
  const role = body.role ?? 'any';
  if (!['oauth', 'fcm', 'apns', 'any', 'unknown'].includes(role)) throw new Error(`unknown role ${role}`);
  const token = body.token ?? null;
  const { role: _r, token: _t, responses, times, persist, ...single } = body;
  const list = responses !== undefined ? responses : [single];
  if (!Array.isArray(list) || list.some((r) => !isObj(r))) throw new Error('responses must be an array of objects');
  const entries = list.map((r) => checkScriptEntry(role, r));
  for (const resp of entries) {
    scripts.push({ role, token, resp, used: 0, remaining: responses !== undefined ? 1 : Math.max(1, times | 0 || 1), persist: responses === undefined && !!persist });
  }
  return list.length;
}

function applyScriptExtras(resp, s, role) {
  resp.headers = resp.headers ?? {};
  if (s.retryAfter !== undefined) resp.headers['retry-after'] = String(s.retryAfter);
  if (isObj(s.headers)) for (const [k, v] of Object.entries(s.headers)) resp.headers[k.toLowerCase()] = String(v);
  // OAuth: a token endpoint that answers 200 with an absurd expires_in (the token itself stays valid for
  // settings.tokenLifetime seconds).
  if (role === 'oauth' && resp.status === 200 && isObj(resp.json) && 'access_token' in resp.json) {
    if (s.expiresInRaw !== undefined) { resp.json.expires_in = new Raw(s.expiresInRaw); resp.raw = true; }
    else if (s.expiresIn !== undefined) resp.json.expires_in = s.expiresIn;
  }
  if (s.body !== undefined && s.status !== undefined) {
    delete resp.json;
    resp.text = typeof s.body === 'string' ? s.body : JSON.stringify(s.body);
  }
}

// ----- raw JSON literals and fuzzed bodies ---------------------------------------------------------------------
// A JSON literal written as is (1e400, 123456789012345678901234567890, -0): JSON.stringify cannot produce these.
// In records (`response`) it shows as its text; `responseText` has the exact body.
class Raw {
  constructor(text) { this.text = text; }
  toJSON() { return this.text; }
}
function serialize(v) {
  if (v instanceof Raw) return v.text;
  if (Array.isArray(v)) return `[${v.map(serialize).join(',')}]`;
  if (isObj(v)) return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${serialize(x)}`).join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

// Deterministic PRNG (mulberry32): the same seed gives the same garbage, so a failing fuzz case can be replayed.
function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n) => Math.floor(next() * n), pick: (list) => list[Math.floor(next() * list.length)] };
}
const FUZZ_KINDS = ['truncate', 'nonjson', 'binary', 'empty', 'bom', 'trailing', 'wrongType', 'hugeNumber', 'deep',
  'longString', 'badString', 'duplicateKey'];
const HUGE_NUMBERS = ['1e300', '-1e300', '1e400', '-1e400', '1e-400', '123456789012345678901234567890',
  '9223372036854775807', '9223372036854775808', '-9223372036854775809', '18446744073709551616',
  '1.7976931348623157e308', '4.9e-324', '-0', '0.5', '-1', '3.999999999999999999999', '1E+2', '0e0'];
const OTHER_TYPES = [null, true, false, 0, -1, '', 'x', '3600', [], {}, [1, 2], { a: 1 }];
// JSON strings a strict parser refuses or must handle with care: lone surrogates, NUL, a bad escape, raw control
// characters, a short \u escape.
const BAD_STRINGS = ['"\\ud800"', '"\\udc00x"', '"\\u0000"', '"a\\u0000b"', '"\\uD83D\\uDE00"', '"\\x41"', '"tab\there"',
  '"\\u12"', '"new\nline"', '"\u00e9\u00e8"'];
const NON_JSON = ['<!DOCTYPE html>\n<html><body><h1>502 Bad Gateway</h1></body></html>', 'Internal Server Error',
  'null', 'true', '[]', '"reason"', '42', 'NaN', 'Infinity', "{'reason':'BadDeviceToken'}",
  '{reason: BadDeviceToken}', '{"reason":"BadDeviceToken"', '}', '{"error":', 'ok'];

// Every path inside v (objects and arrays), the root included as [].
function paths(v, at = [], out = []) {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...at, i], out));
  else if (isObj(v)) for (const [k, x] of Object.entries(v)) paths(x, [...at, k], out);
  return out;
}
function replaceAt(v, at, value) {
  if (at.length === 0) return value;
  const copy = Array.isArray(v) ? [...v] : { ...v };
  copy[at[0]] = replaceAt(v[at[0]], at.slice(1), value);
  return copy;
}
function nested(depth, r) {
  const open = r.next() < 0.5 ? '[' : '{"a":';
  const close = open === '[' ? ']' : '}';
  return new Raw(`${open.repeat(depth)}1${close.repeat(depth)}`);
}

/// Garbage made from `template` (the body the answer would have had): {text | bytes, kind, path}.
function fuzzBody(template, seed, kind) {
  const r = rng(seed);
  kind = kind ?? r.pick(FUZZ_KINDS);
  const base = isObj(template) || Array.isArray(template) ? template : {};
  const text = serialize(base);
  // Prefer leaves (the values a parser reads); the root only when there is nothing else.
  const all = paths(base);
  const inner = all.length > 1 ? all.slice(1) : all;
  const at = r.pick(inner);
  const replaced = (value) => ({ text: serialize(replaceAt(base, at, value)), kind, path: at.join('.') });
  switch (kind) {
    case 'truncate': return { text: text.length > 1 ? text.slice(0, 1 + r.int(text.length - 1)) : '{', kind };
    case 'nonjson': return { text: r.pick(NON_JSON), kind };
    case 'binary': {
      const n = 1 + r.int(64);
      const b = Buffer.alloc(n);
      for (let i = 0; i < n; i++) b[i] = r.int(256);
      b[0] = r.pick([0x00, 0xff, 0xc3, 0x80, 0xfe]);
      return { bytes: b, kind };
    }
    case 'empty': return { text: '', kind };
    case 'bom': return { text: `\ufeff${text}`, kind };
    case 'trailing': return { text: text + r.pick(['x', ' }', '\u0000', '{}', ',', '\n\n{"reason":"BadDeviceToken"}']), kind };
    case 'wrongType': return replaced(r.pick(OTHER_TYPES));
    case 'hugeNumber': return replaced(new Raw(r.pick(HUGE_NUMBERS)));
    case 'deep': return replaced(nested(r.pick([17, 33, 100, 1000, 10000]), r));
    case 'longString': return replaced('x'.repeat(r.pick([4097, 65536, 300000])));
    case 'badString': return replaced(new Raw(r.pick(BAD_STRINGS)));
    case 'duplicateKey': {
      const obj = isObj(base) && Object.keys(base).length ? base : { reason: 'BadDeviceToken' };
      const key = r.pick(Object.keys(obj));
      const other = serialize(r.pick([...OTHER_TYPES, 'Unregistered']));
      const body = serialize(obj);
      return { text: `{${JSON.stringify(key)}:${other},${body.slice(1)}`, kind, path: key };
    }
    default: throw new Error(`unknown fuzz kind ${kind}`);
  }
}

function applyFuzz(resp, s, rec) {
  const template = resp.json ?? (resp.text !== undefined ? (() => { try { return JSON.parse(resp.text); } catch { return {}; } })() : {});
  const f = fuzzBody(template, s.fuzz, s.fuzzKind);
  delete resp.json;
  delete resp.text;
  delete resp.raw;
  if (f.bytes) resp.bytes = f.bytes; else resp.text = f.text;
  resp.headers = { ...(resp.headers ?? {}), 'content-type': 'application/json; charset=UTF-8' };
  rec.fuzz = { seed: s.fuzz, kind: f.kind, path: f.path ?? null };
}

const GOOGLE_STATUS = {
  400: ['INVALID_ARGUMENT', 'Request contains an invalid argument.'],
  401: ['UNAUTHENTICATED', 'Request had invalid authentication credentials.'],
  403: ['PERMISSION_DENIED', 'The caller does not have permission'],
  404: ['NOT_FOUND', 'Requested entity was not found.'],
  409: ['ABORTED', 'The operation was aborted.'],
  429: ['RESOURCE_EXHAUSTED', 'Quota exceeded.'],
  500: ['INTERNAL', 'Internal error encountered.'],
  502: ['UNAVAILABLE', 'Bad gateway.'],
  503: ['UNAVAILABLE', 'The service is currently unavailable.'],
  504: ['DEADLINE_EXCEEDED', 'The request timed out.'],
};
const FCM_DEFAULT_CODE = { 400: 'INVALID_ARGUMENT', 403: 'SENDER_ID_MISMATCH', 404: 'UNREGISTERED', 429: 'QUOTA_EXCEEDED', 500: 'INTERNAL', 503: 'UNAVAILABLE' };
const FCM_CODE_MESSAGE = {
  UNREGISTERED: 'Requested entity was not found.',
  SENDER_ID_MISMATCH: 'SenderId mismatch',
  QUOTA_EXCEEDED: 'Quota exceeded for quota metric \'Send requests\'.',
  THIRD_PARTY_AUTH_ERROR: 'Auth error from APNS or Web Push Service',
};

function googleHtml(status) {
  const what = status === 502 ? 'The server encountered a temporary error and could not complete your request.<p>Please try again in 30 seconds.'
    : 'The server encountered an error and could not complete your request.';
  return `<!DOCTYPE html>\n<html lang=en>\n  <meta charset=utf-8>\n  <meta name=viewport content="initial-scale=1, minimum-scale=1, width=device-width">\n  <title>Error ${status} (Server Error)!!1</title>\n  <a href=//www.google.com/><span id=logo aria-label=Google></span></a>\n  <p><b>${status}.</b> <ins>That’s an error.</ins>\n  <p>${what}  <ins>That’s all we know.</ins>\n`;
}
const htmlResp = (status) => ({ status, headers: { 'content-type': 'text/html; charset=UTF-8' }, text: googleHtml(status) });

// Google error body. code: FcmError errorCode or null; field: BadRequest fieldViolation field or undefined.
function googleError(status, message, code, field, onlyBadRequest = false, fieldDescription = undefined) {
  const [st, defMsg] = GOOGLE_STATUS[status] ?? ['UNKNOWN', 'Unknown error.'];
  const msg = message ?? (code && FCM_CODE_MESSAGE[code]) ?? defMsg;
  const details = [];
  if (code && !onlyBadRequest) details.push({ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: code });
  if (field !== undefined) {
    const v = { description: fieldDescription ?? msg };
    if (field !== null) v.field = field;
    details.push({ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [v] });
  }
  const error = { code: status, message: msg, status: st };
  if (details.length) error.details = details;
  const headers = { vary: 'X-Origin, Referer, Origin,Accept-Encoding' };
  if (status === 401) headers['www-authenticate'] = 'Bearer realm="https://accounts.google.com/", error="invalid_token"';
  return { status, headers, json: { error } };
}

function scriptedFcm(s, ctx) {
  if (s.html) return htmlResp(s.status);
  const code = 'errorCode' in s ? s.errorCode : (FCM_DEFAULT_CODE[s.status] ?? null);
  return googleError(s.status, s.message, code, s.field, false, s.fieldDescription);
}
function scriptedApns(s, ctx) {
  const reason = s.reason ?? ({ 400: 'BadDeviceToken', 403: 'InvalidProviderToken', 404: 'BadPath', 405: 'MethodNotAllowed', 410: 'Unregistered', 413: 'PayloadTooLarge', 429: 'TooManyRequests', 500: 'InternalServerError', 503: 'ServiceUnavailable' }[s.status] ?? 'InternalServerError');
  // Note the scripted JWT rejection so the sender's re-signed token is not counted against the update rate.
  if ((reason === 'ExpiredProviderToken' || reason === 'InvalidProviderToken') && ctx.rec.jwt?.header?.kid) {
    keyState(ctx.rec.jwt.header.kid).allowNextChange = true;
  }
  // 410: timestamp defaults to now; an explicit one (even null) is sent as given.
  const timestamp = s.timestampRaw !== undefined ? new Raw(s.timestampRaw)
    : 'timestamp' in s ? s.timestamp : s.status === 410 ? now() : undefined;
  const resp = apnsError(s.status, reason, ctx, timestamp);
  if (timestamp instanceof Raw) resp.raw = true;
  return resp;
}
function scriptedOauth(s) {
  if (s.html) return htmlResp(s.status);
  const json = { error: s.error ?? (s.status >= 500 ? 'internal_failure' : 'invalid_grant') };
  json.error_description = s.errorDescription ?? (json.error === 'invalid_grant' ? 'Invalid JWT Signature.' : 'scripted failure');
  return { status: s.status, headers: {}, json };
}
function scriptedGeneric(s) {
  if (s.html) return htmlResp(s.status);
  return { status: s.status, headers: {}, json: { error: 'scripted' } };
}
function notFound(cls) {
  if (cls.apnsStyle) return { status: 404, headers: { 'apns-id': crypto.randomUUID() }, json: { reason: 'BadPath' } };
  return { ...htmlResp(404) };
}

// ----- OAuth -------------------------------------------------------------------------------------------------
function oauthError(error, description) {
  return { status: 400, headers: { 'cache-control': 'no-cache, no-store, max-age=0, must-revalidate' }, json: { error, error_description: description } };
}
const TIME_MSG = 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.';

function oauth(ctx) {
  const { headers, method, parsed, rec } = ctx;
  if (method !== 'POST') return { status: 405, headers: {}, json: { error: 'invalid_request', error_description: `Method ${method} not allowed` } };
  const ct = String(headers['content-type'] ?? '').toLowerCase();
  if (!ct.startsWith('application/x-www-form-urlencoded')) {
    return oauthError('invalid_request', 'Content-Type must be application/x-www-form-urlencoded');
  }
  if (!parsed.grant_type) return oauthError('invalid_request', 'Missing required parameter: grant_type');
  if (parsed.grant_type !== JWT_BEARER) return oauthError('unsupported_grant_type', `Invalid grant_type: ${parsed.grant_type}`);
  if (!parsed.assertion) return oauthError('invalid_request', 'Missing required parameter: assertion');
  const v = verifyOauthJwt(parsed.assertion, headers);
  rec.jwt = v.jwt;
  rec.authOk = !v.error;
  rec.authError = v.error ?? null;
  if (v.error) return oauthError(v.code ?? 'invalid_grant', v.error);
  const token = `ya29.fake-${++accessTokenCounter}`;
  const lifetime = Number(settings.tokenLifetime);
  issued.set(token, now() + lifetime * 1000);
  accessTokensIssued++;
  return {
    status: 200,
    headers: { 'cache-control': 'no-cache, no-store, max-age=0, must-revalidate', pragma: 'no-cache' },
    json: { access_token: token, expires_in: lifetime, token_type: 'Bearer' },
  };
}

function verifyOauthJwt(assertion, headers) {
  const j = decodeJwt(assertion);
  if (j.error) return { error: `Invalid JWT: ${j.error}`, jwt: null };
  const jwt = jwtRecord(j);
  let sa;
  try { sa = serviceAccount(); } catch (e) { return { error: `fake: cannot read service-account.json: ${e.message}`, jwt }; }
  const { header: h, claims: c } = j;
  if (h.alg !== 'RS256') return { error: `Invalid JWT: alg must be RS256, got ${JSON.stringify(h.alg)}`, jwt };
  if (h.typ !== 'JWT') return { error: `Invalid JWT: typ must be JWT, got ${JSON.stringify(h.typ)}`, jwt };
  if (h.kid !== sa.private_key_id) return { error: 'Invalid JWT Signature.', detail: 'kid does not match private_key_id', jwt };
  let sigOk = false;
  try { sigOk = crypto.verify('sha256', j.signingInput, saKey(), j.signature); } catch { sigOk = false; }
  if (!sigOk) return { error: 'Invalid JWT Signature.', jwt };
  if (c.iss !== sa.client_email) return { error: 'Invalid grant: account not found', jwt };
  const authority = headers[':authority'] ?? headers.host;
  const audOk = [sa.token_uri, settings.tokenUri, authority ? `https://${authority}/token` : null].filter(Boolean);
  if (typeof c.aud !== 'string' || !audOk.includes(c.aud)) {
    return { error: `Invalid JWT: Failed audience check. The right audience is ${sa.token_uri}`, jwt };
  }
  if (typeof c.scope !== 'string' || !c.scope.split(' ').includes(FCM_SCOPE)) {
    return { code: 'invalid_scope', error: 'Invalid OAuth scope or ID token audience provided.', jwt };
  }
  if (!Number.isInteger(c.iat) || !Number.isInteger(c.exp)) return { error: TIME_MSG, jwt };
  const t = now();
  if (Math.abs(c.iat * 1000 - t) > settings.skewMs) return { error: TIME_MSG, jwt };
  if (c.exp * 1000 <= t || c.exp <= c.iat || c.exp > c.iat + 3600) return { error: TIME_MSG, jwt };
  return { jwt };
}

// ----- FCM ---------------------------------------------------------------------------------------------------
// proto JSON accepts both the field name and its lowerCamel form.
const camel = (k) => k.replace(/_([a-z])/g, (_, ch) => ch.toUpperCase());
const fieldSet = (names) => new Set(names.flatMap((n) => [n, camel(n)]));
const MESSAGE_FIELDS = fieldSet(['name', 'data', 'notification', 'android', 'webpush', 'apns', 'fcm_options', 'token', 'topic', 'condition']);
const NOTIFICATION_FIELDS = fieldSet(['title', 'body', 'image']);
const ANDROID_FIELDS = fieldSet(['collapse_key', 'priority', 'ttl', 'restricted_package_name', 'data', 'notification', 'fcm_options', 'direct_boot_ok', 'bandwidth_constrained_ok', 'restricted_satellite_ok']);
const ANDROID_NOTIFICATION_FIELDS = fieldSet(['title', 'body', 'icon', 'color', 'sound', 'tag', 'click_action', 'body_loc_key', 'body_loc_args', 'title_loc_key', 'title_loc_args', 'channel_id', 'ticker', 'sticky', 'event_time', 'local_only', 'notification_priority', 'default_sound', 'default_vibrate_timings', 'default_light_settings', 'vibrate_timings', 'visibility', 'notification_count', 'light_settings', 'image', 'bypass_proxy_notification', 'proxy']);
const ANDROID_NOTIFICATION_STRINGS = fieldSet(['title', 'body', 'icon', 'color', 'sound', 'tag', 'click_action', 'body_loc_key', 'title_loc_key', 'channel_id', 'ticker', 'image']);
const RESERVED_DATA_KEYS = new Set(['from', 'notification', 'message_type', 'collapse_key']);
const FCM_TOKEN = /^[A-Za-z0-9_:.\-]{1,4096}$/;
const TTL = /^\d{1,12}(\.\d{1,9})?s$/;

class Bad extends Error {
  // kind: 'parse' → only a BadRequest detail (Google front end); 'fcm' → FcmError INVALID_ARGUMENT (+ field).
  constructor(message, field, kind = 'fcm') { super(message); this.field = field; this.kind = kind; }
}
const get = (o, name) => (o[name] !== undefined ? o[name] : o[camel(name)]);

function checkFields(obj, allowed, where) {
  if (!isObj(obj)) throw new Bad(`Invalid value at '${where}' (type.googleapis.com/google.firebase.fcm.v1.${where}), ${JSON.stringify(obj)}`, where, 'parse');
  for (const k of Object.keys(obj)) {
    if (!allowed.has(k)) throw new Bad(`Invalid JSON payload received. Unknown name "${k}" at '${where}': Cannot find field.`, where, 'parse');
  }
}
function checkString(v, where) {
  if (v !== undefined && typeof v !== 'string') throw new Bad(`Invalid value at '${where}' (TYPE_STRING), ${JSON.stringify(v)}`, where, 'parse');
}
function checkDataMap(data, where) {
  if (data === undefined) return;
  if (!isObj(data)) throw new Bad(`Invalid value at '${where}' (type.googleapis.com/google.protobuf.Map), ${JSON.stringify(data)}`, where, 'parse');
  Object.entries(data).forEach(([k, v], i) => {
    if (typeof v !== 'string') throw new Bad(`Invalid value at '${where}[${i}].value' (TYPE_STRING), ${JSON.stringify(v)}`, `${where}[${i}].value`, 'parse');
  });
}

function validateFcmMessage(body) {
  if (!isObj(body)) throw new Bad('Invalid JSON payload received. Expected an object.', null, 'parse');
  for (const k of Object.keys(body)) {
    if (!['message', 'validate_only', 'validateOnly'].includes(k)) throw new Bad(`Invalid JSON payload received. Unknown name "${k}": Cannot find field.`, null, 'parse');
  }
  const m = body.message;
  if (m === undefined) throw new Bad('Recipient of the message is not set.', 'message');
  checkFields(m, MESSAGE_FIELDS, 'message');
  checkString(m.token, 'message.token');
  if (m.notification !== undefined) {
    checkFields(m.notification, NOTIFICATION_FIELDS, 'message.notification');
    for (const f of ['title', 'body', 'image']) checkString(m.notification[f], `message.notification.${f}`);
  }
  checkDataMap(m.data, 'message.data');
  const a = m.android;
  if (a !== undefined) {
    checkFields(a, ANDROID_FIELDS, 'message.android');
    checkString(get(a, 'collapse_key'), 'message.android.collapse_key');
    checkString(get(a, 'restricted_package_name'), 'message.android.restricted_package_name');
    checkDataMap(a.data, 'message.android.data');
    const pr = a.priority;
    if (pr !== undefined && !(typeof pr === 'string' && ['normal', 'high'].includes(pr.toLowerCase()))) {
      throw new Bad(`Invalid value at 'message.android.priority' (type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority), ${JSON.stringify(pr)}`, 'message.android.priority', 'parse');
    }
    if (a.ttl !== undefined && !(typeof a.ttl === 'string' && TTL.test(a.ttl))) {
      throw new Bad(`Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration), ${JSON.stringify(a.ttl)}`, 'message.android.ttl', 'parse');
    }
    if (a.notification !== undefined) {
      checkFields(a.notification, ANDROID_NOTIFICATION_FIELDS, 'message.android.notification');
      for (const f of ANDROID_NOTIFICATION_STRINGS) checkString(a.notification[f], `message.android.notification.${f}`);
    }
  }
  // Targets: this project sends to tokens only.
  const targets = ['token', 'topic', 'condition'].filter((t) => m[t] !== undefined);
  if (targets.length > 1) throw new Bad('Exactly one of token, topic or condition must be set.', 'message');
  if (m.token === undefined) throw new Bad('Recipient of the message is not set.', 'message');
  if (!FCM_TOKEN.test(m.token)) throw new Bad('The registration token is not a valid FCM registration token', 'message.token');
  // Reserved data keys (whole message rejected).
  for (const [where, data] of [['message.data', m.data], ['message.android.data', a?.data]]) {
    if (!data) continue;
    for (const k of Object.keys(data)) {
      const lk = k.toLowerCase();
      if (RESERVED_DATA_KEYS.has(lk) || lk.startsWith('google') || lk.startsWith('gcm')) {
        throw new Bad(`Invalid data payload key: ${k}`, where);
      }
    }
  }
  const bytes = Buffer.byteLength(JSON.stringify(m), 'utf8');
  if (bytes > FCM_MAX_MESSAGE) throw new Bad('Android message is too big', undefined, 'fcm', bytes);
  return bytes;
}

function fcmBearer(headers) {
  const m = /^Bearer\s+(\S+)$/i.exec(String(headers.authorization ?? ''));
  const token = m ? m[1] : null;
  const exp = token ? issued.get(token) : undefined;
  let error = null;
  if (!token) error = 'missing bearer token';
  else if (exp === undefined) error = 'unknown access token';
  else if (exp <= now()) error = 'expired access token';
  return { token, error };
}

function fcm(ctx) {
  const { headers, method, cls, text, rec } = ctx;
  if (method !== 'POST') return googleError(404, 'Method not found.', null, undefined);
  const a = fcmBearer(headers);
  rec.accessToken = a.token;
  rec.authError = a.error;
  rec.authOk = !rec.authError;
  if (!rec.authOk) return googleError(401, undefined, null, undefined);
  let sa;
  try { sa = serviceAccount(); } catch { sa = {}; }
  if (sa.project_id && cls.project !== sa.project_id) {
    return googleError(403, `Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/${cls.project}' (or it may not exist).`, null, undefined);
  }
  const ct = String(headers['content-type'] ?? '').toLowerCase();
  if (!ct.startsWith('application/json')) {
    return googleError(400, `Invalid JSON payload received. Content-Type "${ct}" is not application/json.`, null, null);
  }
  let body;
  try { body = JSON.parse(text); } catch (e) {
    return googleError(400, `Invalid JSON payload received. ${e.message}`, null, null);
  }
  try {
    rec.messageBytes = validateFcmMessage(body);
  } catch (e) {
    if (!(e instanceof Bad)) throw e;
    if (isObj(body) && isObj(body.message)) rec.messageBytes = Buffer.byteLength(JSON.stringify(body.message), 'utf8');
    if (e.kind === 'parse') return googleError(400, e.message, null, e.field === undefined ? null : e.field);
    return googleError(400, e.message, 'INVALID_ARGUMENT', e.field);
  }
  if (body.validate_only === true || body.validateOnly === true) {
    return { status: 200, headers: {}, json: { name: `projects/${cls.project}/messages/fake_message_id` } };
  }
  return { status: 200, headers: {}, json: { name: `projects/${cls.project}/messages/0:${++fcmMessageCounter}` } };
}

// ----- APNs --------------------------------------------------------------------------------------------------
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const HEX_TOKEN = /^(?:[0-9a-fA-F]{2}){32,100}$/;

function apnsError(status, reason, ctx, timestamp) {
  const json = { reason };
  if (timestamp !== undefined) json.timestamp = timestamp;
  return { status, headers: { 'apns-id': apnsId(ctx) }, json };
}
function apnsId(ctx) {
  const given = ctx.headers['apns-id'];
  return typeof given === 'string' && UUID.test(given) ? given : crypto.randomUUID().toUpperCase();
}
function keyState(kid) {
  let st = apnsKeyState.get(kid);
  if (!st) { st = { since: null, seen: new Set(), allowNextChange: false }; apnsKeyState.set(kid, st); }
  return st;
}

const sigCache = new Map(); // raw APNs JWT -> signature valid (the key never changes during a run)
function verifyApnsJwt(raw) {
  const j = decodeJwt(raw);
  if (j.error) return { reason: 'InvalidProviderToken', detail: j.error, jwt: null };
  const jwt = jwtRecord(j);
  const { header: h, claims: c } = j;
  const bad = (detail) => ({ reason: 'InvalidProviderToken', detail, jwt });
  if (h.alg !== 'ES256') return bad(`alg must be ES256, got ${JSON.stringify(h.alg)}`);
  if (h.kid !== settings.apnsKeyId) return bad(`kid ${JSON.stringify(h.kid)} is not ${settings.apnsKeyId}`);
  const keys = Object.keys(c).sort();
  if (keys.length !== 2 || keys[0] !== 'iat' || keys[1] !== 'iss') return bad(`claims must be exactly iss and iat, got ${keys.join(',')}`);
  if (c.iss !== settings.teamId) return bad(`iss ${JSON.stringify(c.iss)} is not ${settings.teamId}`);
  if (!Number.isInteger(c.iat)) return bad('iat must be an integer (seconds)');
  if (j.signature.length !== 64) return bad(`signature must be raw r||s (64 bytes), got ${j.signature.length} bytes`);
  let ok = sigCache.get(raw);
  if (ok === undefined) {
    try { ok = crypto.verify('sha256', j.signingInput, { key: apnsKey(), dsaEncoding: 'ieee-p1363' }, j.signature); } catch { ok = false; }
    if (sigCache.size > 1000) sigCache.clear();
    sigCache.set(raw, ok);
  }
  if (!ok) return bad('ES256 signature does not verify');
  const t = now();
  if (c.iat * 1000 > t + settings.skewMs) return bad('iat is in the future');
  if (t - c.iat * 1000 > APNS_JWT_MAX_AGE_MS) return { reason: 'ExpiredProviderToken', detail: 'iat older than one hour', jwt };
  return { jwt };
}

// APNs environments: a token registered for one environment (POST /control/tokens) is refused with BadDeviceToken by
// the other; a token registered for neither is accepted by both unless settings.apnsStrictTokens.
const ENVIRONMENTS = ['production', 'sandbox'];
let apnsTokens = new Map(); // lowercased device token -> environment
function tokenBelongsTo(token, environment) {
  const env = apnsTokens.get(token.toLowerCase());
  return env === undefined ? !settings.apnsStrictTokens : env === environment;
}
function addTokens(b) {
  if (!isObj(b)) throw new Error('tokens must be a JSON object');
  const counts = {};
  for (const [env, list] of Object.entries(b)) {
    if (!ENVIRONMENTS.includes(env)) throw new Error(`unknown environment ${env} (production or sandbox)`);
    if (!Array.isArray(list) || list.some((t) => typeof t !== 'string' || t === '')) throw new Error(`${env} must be an array of tokens`);
  }
  for (const [env, list] of Object.entries(b)) {
    for (const t of list) apnsTokens.set(t.toLowerCase(), env);
    counts[env] = list.length;
  }
  return counts;
}

function apns(ctx) {
  const { headers, method, cls, text, bodyBytes, rec } = ctx;
  if (method !== 'POST') return apnsError(405, 'MethodNotAllowed', ctx);
  if (!cls.deviceToken) return apnsError(400, 'MissingDeviceToken', ctx);
  const auth = headers.authorization;
  if (auth === undefined || auth === '') { rec.authOk = false; rec.authError = 'missing authorization'; return apnsError(403, 'MissingProviderToken', ctx); }
  const m = /^bearer\s+(\S+)$/i.exec(String(auth));
  if (!m) { rec.authOk = false; rec.authError = 'authorization is not "bearer <JWT>"'; return apnsError(403, 'InvalidProviderToken', ctx); }
  const v = verifyApnsJwt(m[1]);
  rec.jwt = v.jwt;
  if (v.jwt) apnsJwts.add(v.jwt.raw);
  if (v.reason) {
    rec.authOk = false;
    rec.authError = v.detail;
    if (v.jwt?.header?.kid) keyState(v.jwt.header.kid).allowNextChange = true;
    return apnsError(403, v.reason, ctx);
  }
  // Token update rate, per key id.
  const st = keyState(v.jwt.header.kid);
  if (!st.seen.has(v.jwt.raw)) {
    const t = now();
    if (settings.enforceTokenUpdateRate && st.since !== null && !st.allowNextChange && t - st.since < TOKEN_UPDATE_MIN_MS) {
      rec.authOk = false;
      rec.authError = `new JWT for kid ${v.jwt.header.kid} ${Math.round((t - st.since) / 1000)} s after the previous one`;
      return apnsError(429, 'TooManyProviderTokenUpdates', ctx);
    }
    st.seen.add(v.jwt.raw);
    st.since = t;
    st.allowNextChange = false;
  }
  rec.authOk = true;
  const topic = headers['apns-topic'];
  if (topic === undefined || topic === '') return apnsError(400, 'MissingTopic', ctx);
  if (topic !== settings.bundleId) return apnsError(400, 'BadTopic', ctx);
  const pushType = headers['apns-push-type'];
  if (!APNS_PUSH_TYPES.has(pushType)) return apnsError(400, 'InvalidPushType', ctx);
  const pri = headers['apns-priority'];
  if (pri !== undefined && !['10', '5', '1'].includes(pri)) return apnsError(400, 'BadPriority', ctx);
  const expn = headers['apns-expiration'];
  if (expn !== undefined && !/^\d{1,12}$/.test(expn)) return apnsError(400, 'BadExpirationDate', ctx);
  const coll = headers['apns-collapse-id'];
  if (coll !== undefined && Buffer.byteLength(coll, 'utf8') > 64) return apnsError(400, 'BadCollapseId', ctx);
  const id = headers['apns-id'];
  if (id !== undefined && !UUID.test(id)) return apnsError(400, 'BadMessageId', ctx);
  if (!HEX_TOKEN.test(cls.deviceToken)) return apnsError(400, 'BadDeviceToken', ctx);
  if (!tokenBelongsTo(cls.deviceToken, ctx.session?.environment ?? 'production')) return apnsError(400, 'BadDeviceToken', ctx);
  if (bodyBytes === 0) return apnsError(400, 'PayloadEmpty', ctx);
  if (bodyBytes > APNS_MAX_PAYLOAD) return apnsError(413, 'PayloadTooLarge', ctx);
  let payload;
  try { payload = JSON.parse(text); } catch { payload = undefined; }
  if (!isObj(payload) || !isObj(payload.aps)) return apnsError(400, 'BadPayload', ctx);
  return { status: 200, headers: { 'apns-id': apnsId(ctx) } };
}

// ----- control API -------------------------------------------------------------------------------------------
function settingsPatch(b) {
  if (!isObj(b)) throw new Error('settings must be a JSON object');
  const types = {
    tokenLifetime: 'number', skewMs: 'number', clockOffsetMs: 'number', apnsKeyId: 'string', teamId: 'string',
    bundleId: 'string', enforceTokenUpdateRate: 'boolean', apnsStreamGate: 'boolean', tokenUri: 'string', maxRecords: 'number',
    apnsStrictTokens: 'boolean',
  };
  for (const [k, v] of Object.entries(b)) {
    if (!(k in types)) throw new Error(`unknown setting ${k}`);
    if (!(typeof v === types[k] || (k === 'tokenUri' && v === null))) throw new Error(`${k} must be a ${types[k]}`);
  }
  Object.assign(settings, b);
  if ('apnsStreamGate' in b) {
    for (const srv of servers) {
      try { srv.updateSettings({ maxConcurrentStreams: b.apnsStreamGate ? 1 : 100 }); } catch (e) { log(`updateSettings ${e.message}`); }
    }
  }
}

function stats() {
  const byRole = {};
  for (const r of ROLES) {
    const c = counters[r];
    byRole[r] = { total: c.total, pending: c.total - c.answered - c.aborted, aborted: c.aborted, byStatus: { ...c.byStatus } };
  }
  return {
    byRole, sessionsOpened, sessionsActive: sessions.size, maxConcurrentStreams: maxConcurrent, goawaysSent,
    accessTokensIssued, apnsJwts: apnsJwts.size, recorded: records.length, dropped,
  };
}

function clearAll(b) {
  records = [];
  dropped = 0;
  scripts = [];
  apnsTokens = new Map();
  resetCounters();
  sessionsOpened = 0;
  maxConcurrent = Math.max(0, ...[...sessions].map((s) => s.activeStreams));
  goawaysSent = 0;
  accessTokensIssued = 0;
  apnsJwts = new Set();
  if (isObj(b) && b.settings) {
    settings = DEFAULT_SETTINGS();
    issued.clear();
    apnsKeyState = new Map();
    for (const srv of servers) { try { srv.updateSettings({ maxConcurrentStreams: 100 }); } catch { /* ignore */ } }
  }
  for (const w of waiters) { clearTimeout(w.timer); w.resolve({ ok: false, count: 0, cleared: true }); }
  waiters = [];
}

const control = http.createServer((req, res) => {
  const chunks = [];
  let size = 0;
  req.on('data', (c) => { size += c.length; if (size <= MAX_BODY) chunks.push(c); });
  req.on('end', () => {
    const send = (status, obj) => {
      const s = JSON.stringify(obj);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s) });
      res.end(s);
    };
    let body = {};
    const raw = Buffer.concat(chunks).toString('utf8');
    if (raw.trim().length) {
      try { body = JSON.parse(raw); } catch (e) { return send(400, { ok: false, error: `invalid JSON: ${e.message}` }); }
    }
    const url = new URL(req.url, 'http://127.0.0.1');
    const route = `${req.method} ${url.pathname}`;
    try {
      switch (route) {
        case 'GET /control/requests': {
          const role = url.searchParams.get('role');
          const since = Number(url.searchParams.get('since') ?? 0);
          const token = url.searchParams.get('token');
          const environment = url.searchParams.get('environment');
          const list = records.filter((r) => (!role || role === 'any' || r.role === role) && r.seq > since
            && (token === null || sameToken(r.role, r.deviceToken, token))
            && (environment === null || r.environment === environment));
          return send(200, { requests: list, dropped });
        }
        case 'POST /control/clear': clearAll(body); return send(200, { ok: true });
        case 'POST /control/script': return send(200, { ok: true, queued: addScript(body) });
        case 'POST /control/tokens': return send(200, { ok: true, ...addTokens(body) });
        case 'POST /control/set': settingsPatch(body); return send(200, { ok: true, settings });
        case 'GET /control/settings': return send(200, { settings });
        case 'GET /control/stats': return send(200, stats());
        case 'POST /control/revoke': { const n = issued.size; issued.clear(); return send(200, { ok: true, revoked: n }); }
        case 'POST /control/goaway': { const list = [...sessions]; list.forEach((s) => goaway(s)); return send(200, { ok: true, sessions: list.length }); }
        case 'POST /control/wait': {
          const count = Number(body.count ?? 1);
          if (!Number.isInteger(count) || count < 0) throw new Error('count must be a non-negative integer');
          if (body.role !== undefined && !['any', ...ROLES].includes(body.role)) throw new Error(`unknown role ${body.role}`);
          const timeoutMs = Math.min(Math.max(0, Number(body.timeoutMs ?? 5000)), MAX_WAIT_MS);
          const w = { role: body.role ?? 'any', count, status: body.status, answered: !!body.answered };
          const n = countFor(w.role, w.status, w.answered);
          if (n >= count) return send(200, { ok: true, count: n });
          w.resolve = (r) => send(200, r);
          w.timer = setTimeout(() => {
            waiters = waiters.filter((x) => x !== w);
            send(200, { ok: false, count: countFor(w.role, w.status, w.answered) });
          }, timeoutMs);
          waiters.push(w);
          res.on('close', () => { if (waiters.includes(w)) { clearTimeout(w.timer); waiters = waiters.filter((x) => x !== w); } });
          return undefined;
        }
        default: return send(404, { ok: false, error: `no route ${route}` });
      }
    } catch (e) {
      return send(400, { ok: false, error: e.message });
    }
  });
});
control.requestTimeout = 90000;

// ----- start / stop ------------------------------------------------------------------------------------------
function listen(srv, port) {
  return new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => { srv.off('error', reject); resolve(srv.address().port); });
  });
}

let stopping = false;
function shutdown(code = 0) {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(code), 2000).unref();
  for (const w of waiters) { clearTimeout(w.timer); try { w.resolve({ ok: false, count: 0 }); } catch { /* ignore */ } }
  for (const s of sessions) { try { s.destroy(); } catch { /* ignore */ } }
  control.closeAllConnections?.();
  let open = servers.length + 1;
  const done = () => { if (--open === 0) process.exit(code); };
  for (const srv of servers) srv.close(done);
  control.close(done);
}
process.on('SIGTERM', () => shutdown(0));
process.on('SIGINT', () => shutdown(0));

try {
  const port = await listen(server, Number(opt.port));
  const controlPort = await listen(control, Number(opt['control-port']));
  const ready = { port, control_port: controlPort };
  if (sandboxServer) ready.sandbox_port = await listen(sandboxServer, Number(opt['sandbox-port']));
  const line = JSON.stringify(ready);
  if (opt['ready-file']) {
    const tmp = `${opt['ready-file']}.tmp-${process.pid}`;
    fs.writeFileSync(tmp, `${line}\n`);
    fs.renameSync(tmp, opt['ready-file']);
  }
  process.stdout.write(`${line}\n`);
} catch (e) {
  process.stderr.write(`push_fake: cannot start: ${e.message}\n`);
  process.exit(1);
}

if (!opt['no-parent-watch']) {
  const parent = process.ppid;
  setInterval(() => {
    try { process.kill(parent, 0); } catch (e) { if (e.code === 'ESRCH') { log('parent gone'); shutdown(0); } }
  }, 1000).unref();
}
if (opt['max-seconds']) setTimeout(() => { log('max-seconds reached'); shutdown(0); }, Number(opt['max-seconds']) * 1000).unref();
