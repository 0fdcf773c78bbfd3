// Tests of the fake push providers (Tests/fakes/push_fake.mjs): node --test Tests/fakes/test_push_fake.mjs
// Generates throwaway credentials into a temp dir, starts the fake on ephemeral loopback ports, signs JWTs here
// with node:crypto and speaks HTTP/2 over TLS to it with node:http2, trusting only the generated CA.
// Every wait is bounded; the whole file runs in a few seconds.

import { test, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, execFileSync, execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FAKE = path.join(HERE, 'push_fake.mjs');
const MAKE_CREDS = path.join(HERE, 'make_push_credentials.sh');
const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
const DEVICE = 'a'.repeat(64);

let dir, proc, port, controlPort, ca, sa, saKey, apnsKeyPem, exitPromise;
const clients = [];

// ----- helpers -------------------------------------------------------------------------------------------------
const nowS = () => Math.floor(Date.now() / 1000);
const b64u = (x) => Buffer.from(x).toString('base64url');

function signRS256(claims, { header = {}, key = saKey } = {}) {
  const h = { alg: 'RS256', typ: 'JWT', kid: sa.private_key_id, ...header };
  const input = `${b64u(JSON.stringify(h))}.${b64u(JSON.stringify(claims))}`;
  return `${input}.${crypto.sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}
function saClaims(extra = {}) {
  const iat = nowS();
  return { iss: sa.client_email, scope: FCM_SCOPE, aud: `https://127.0.0.1:${port}/token`, iat, exp: iat + 3600, ...extra };
}
function signES256(claims = { iss: 'TEAM123456', iat: nowS() }, { header = {}, key = apnsKeyPem, der = false } = {}) {
  const h = { alg: 'ES256', kid: 'TESTKEY123', ...header };
  const input = `${b64u(JSON.stringify(h))}.${b64u(JSON.stringify(claims))}`;
  const sig = crypto.sign('sha256', Buffer.from(input), { key, dsaEncoding: der ? 'der' : 'ieee-p1363' });
  return `${input}.${sig.toString('base64url')}`;
}

function connect(host = '127.0.0.1', toPort = port) {
  const c = http2.connect(`https://${host}:${toPort}`, { ca, servername: host === '127.0.0.1' ? undefined : host });
  c.on('error', () => {});
  clients.push(c);
  return c;
}

// One HTTP/2 request; resolves {status, headers, text, json}. Bounded by timeoutMs.
function h2(client, headers, body, timeoutMs = 5000) {
  return new Promise((resolve, reject) => {
    const req = client.request({ ':method': 'POST', ...headers });
    const timer = setTimeout(() => { req.close(http2.constants.NGHTTP2_CANCEL); reject(new Error('h2 request timed out')); }, timeoutMs);
    let status, resHeaders;
    const chunks = [];
    req.on('response', (h) => { status = h[':status']; resHeaders = h; });
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      let json;
      try { json = text ? JSON.parse(text) : undefined; } catch { json = undefined; }
      resolve({ status, headers: resHeaders, text, json });
    });
    req.on('error', (e) => { clearTimeout(timer); reject(e); });
    req.on('close', () => { clearTimeout(timer); reject(new Error(`stream closed without a complete answer (rst code ${req.rstCode})`)); });
    if (body !== undefined) req.end(typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body));
    else req.end();
  });
}

async function ctl(method, p, body, toControlPort = controlPort) {
  const res = await fetch(`http://127.0.0.1:${toControlPort}${p}`, {
    method,
    headers: body !== undefined ? { 'content-type': 'application/json' } : {},
    body: body !== undefined ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(10000),
  });
  const json = await res.json();
  if (res.status !== 200) throw new Error(`control ${p}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

function tokenRequest(client, assertion, extra = {}) {
  const form = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString();
  return h2(client, { ':path': '/token', 'content-type': 'application/x-www-form-urlencoded', ...extra }, form);
}
async function accessToken(client) {
  const r = await tokenRequest(client, signRS256(saClaims()));
  assert.equal(r.status, 200, r.text);
  return r.json.access_token;
}
function fcmSend(client, bearer, message, extra = {}) {
  const headers = { ':path': '/v1/projects/aprs-cloud-test/messages:send', 'content-type': 'application/json', ...extra };
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  return h2(client, headers, { message });
}
const goodMessage = (over = {}) => ({
  token: 'fcm-token_1:APA91b',
  notification: { title: 'N0CALL', body: 'hello' },
  data: { fromCall: 'N0CALL', to: 'N0CALL-7', seqId: '12', count: '1' },
  android: { priority: 'high', collapse_key: 'N0CALL-7', ttl: '86400s', notification: { tag: 'N0CALL-7' } },
  ...over,
});
// ES256 signatures are randomized: every signES256() call is a new provider token, so tests share one per test.
let apnsJwt;
function apnsSend(client, { jwt = apnsJwt, token = DEVICE, headers = {}, payload } = {}) {
  const h = {
    ':path': `/3/device/${token}`,
    authorization: `bearer ${jwt}`,
    'apns-topic': 'org.example.htcommander',
    'apns-push-type': 'alert',
    'apns-priority': '10',
    'apns-expiration': String(nowS() + 3600),
    'apns-collapse-id': 'N0CALL-7',
    ...headers,
  };
  for (const [k, v] of Object.entries(h)) if (v === undefined) delete h[k];
  return h2(client, h, payload ?? { aps: { alert: { title: 'N0CALL', body: 'hello' }, sound: 'default' }, fromCall: 'N0CALL' });
}
const fcmErrorCode = (json) => json?.error?.details?.find((d) => d['@type'].endsWith('google.firebase.fcm.v1.FcmError'))?.errorCode;
const fieldViolations = (json) => json?.error?.details?.find((d) => d['@type'] === 'type.googleapis.com/google.rpc.BadRequest')?.fieldViolations ?? [];

// Resolves with the first emission of `event` on `emitter` (its first argument), or rejects after ms.
function once(emitter, event, ms, what = event) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { emitter.off(event, on); reject(new Error(`no ${what} within ${ms} ms`)); }, ms);
    const on = (v) => { clearTimeout(timer); resolve(v); };
    emitter.once(event, on);
  });
}

function readLine(stream, timeoutMs) {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`no ready line within ${timeoutMs} ms`)), timeoutMs);
    stream.on('data', (d) => {
      buf += d;
      const i = buf.indexOf('\n');
      if (i >= 0) { clearTimeout(timer); resolve(buf.slice(0, i)); }
    });
    stream.on('end', () => { clearTimeout(timer); reject(new Error(`fake exited before its ready line: ${buf}`)); });
  });
}

// ----- setup ---------------------------------------------------------------------------------------------------
before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'push-fake-'));
  execFileSync(MAKE_CREDS, [dir], { timeout: 30000 });
  proc = spawn(process.execPath, [FAKE, '--dir', dir, '--port', '0', '--ready-file', path.join(dir, 'ready.json'), '--max-seconds', '120'], { stdio: ['ignore', 'pipe', 'inherit'] });
  exitPromise = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  const line = await readLine(proc.stdout, 10000);
  ({ port, control_port: controlPort } = JSON.parse(line));
  assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, 'ready.json'), 'utf8')), { port, control_port: controlPort });
  // Point token_uri at the running fake (keeps the keys).
  execFileSync(MAKE_CREDS, [dir, `https://127.0.0.1:${port}`], { timeout: 30000 });
  ca = fs.readFileSync(path.join(dir, 'ca.pem'));
  sa = JSON.parse(fs.readFileSync(path.join(dir, 'service-account.json'), 'utf8'));
  saKey = crypto.createPrivateKey(sa.private_key);
  apnsKeyPem = fs.readFileSync(path.join(dir, 'AuthKey_TESTKEY123.p8'), 'utf8');
});

afterEach(() => { for (const c of clients.splice(0)) c.destroy(); });

after(async () => {
  if (proc && proc.exitCode === null) proc.kill('SIGTERM');
  let timer;
  const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve('timeout'), 5000); });
  const r = await Promise.race([exitPromise, timeout]);
  clearTimeout(timer);
  if (r === 'timeout') proc.kill('SIGKILL');
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  assert.deepEqual(r, { code: 0, signal: null }, 'SIGTERM must exit 0');
});

beforeEach(async () => {
  await ctl('POST', '/control/clear', { settings: true });
  apnsJwt = signES256();
});

// ----- credentials ---------------------------------------------------------------------------------------------
test('credentials: files, formats, certificate SANs', () => {
  for (const f of ['ca.pem', 'server.pem', 'server-key.pem', 'service-account.json', 'service-account-public.pem', 'AuthKey_TESTKEY123.p8', 'apns-public.pem']) {
    assert.ok(fs.statSync(path.join(dir, f)).size > 0, f);
  }
  assert.equal(sa.type, 'service_account');
  assert.equal(sa.project_id, 'aprs-cloud-test');
  assert.equal(sa.client_email, 'push@aprs-cloud-test.iam.gserviceaccount.com');
  assert.match(sa.private_key_id, /^[0-9a-f]{40}$/);
  assert.equal(sa.token_uri, `https://127.0.0.1:${port}/token`);
  assert.ok(sa.private_key.startsWith('-----BEGIN PRIVATE KEY-----\n'));
  assert.match(fs.readFileSync(path.join(dir, 'service-account.json'), 'utf8'), /"private_key": "-----BEGIN PRIVATE KEY-----\\n/);
  assert.equal(saKey.asymmetricKeyType, 'rsa');
  assert.equal(saKey.asymmetricKeyDetails.modulusLength, 2048);
  assert.ok(apnsKeyPem.startsWith('-----BEGIN PRIVATE KEY-----'));
  const ak = crypto.createPrivateKey(apnsKeyPem);
  assert.equal(ak.asymmetricKeyType, 'ec');
  assert.equal(ak.asymmetricKeyDetails.namedCurve, 'prime256v1');
  const cert = new crypto.X509Certificate(fs.readFileSync(path.join(dir, 'server.pem')));
  const caCert = new crypto.X509Certificate(ca);
  assert.ok(cert.checkIssued(caCert) && cert.verify(caCert.publicKey));
  assert.match(cert.subjectAltName, /IP Address:127\.0\.0\.1/);
  assert.match(cert.subjectAltName, /DNS:localhost/);
});

// ----- OAuth ---------------------------------------------------------------------------------------------------
test('oauth: a good JWT gets an access token; bad ones are refused like Google', async () => {
  const c = connect();
  const ok = await tokenRequest(c, signRS256(saClaims()));
  assert.equal(ok.status, 200);
  assert.match(ok.json.access_token, /^ya29\.fake-\d+$/);
  assert.equal(ok.json.expires_in, 3599);
  assert.equal(ok.json.token_type, 'Bearer');
  // aud as written in the service account file is also accepted (same here) and via localhost.
  const viaLocalhost = await tokenRequest(connect('localhost'), signRS256(saClaims({ aud: `https://localhost:${port}/token` })));
  assert.equal(viaLocalhost.status, 200, viaLocalhost.text);

  const otherKey = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const cases = [
    ['bad signature', signRS256(saClaims(), { key: otherKey }), 'invalid_grant', /Signature/],
    ['wrong kid', signRS256(saClaims(), { header: { kid: 'nope' } }), 'invalid_grant', /Signature/],
    ['wrong alg', signRS256(saClaims(), { header: { alg: 'RS512' } }), 'invalid_grant', /alg/],
    ['wrong aud', signRS256(saClaims({ aud: 'https://oauth2.googleapis.com/token' })), 'invalid_grant', /audience/],
    ['wrong iss', signRS256(saClaims({ iss: 'x@y.iam.gserviceaccount.com' })), 'invalid_grant', /account/],
    ['wrong scope', signRS256(saClaims({ scope: 'https://www.googleapis.com/auth/cloud-platform' })), 'invalid_scope', /scope/],
    ['exp too far', signRS256(saClaims({ exp: nowS() + 7200 })), 'invalid_grant', /short-lived/],
    ['expired', signRS256(saClaims({ iat: nowS() - 4000, exp: nowS() - 400 })), 'invalid_grant', /short-lived/],
    ['iat skewed', signRS256(saClaims({ iat: nowS() + 600, exp: nowS() + 1200 })), 'invalid_grant', /short-lived/],
    ['padded base64', `${signRS256(saClaims())}==`, 'invalid_grant', /base64url/],
  ];
  for (const [name, jwt, error, desc] of cases) {
    const r = await tokenRequest(c, jwt);
    assert.equal(r.status, 400, name);
    assert.equal(r.json.error, error, name);
    assert.match(r.json.error_description, desc, name);
  }
  const badGrant = await h2(c, { ':path': '/token', 'content-type': 'application/x-www-form-urlencoded' }, 'grant_type=password&assertion=x');
  assert.equal(badGrant.json.error, 'unsupported_grant_type');

  // Clock skew set on the fake: our fresh JWT is now "in the future" for it.
  await ctl('POST', '/control/set', { clockOffsetMs: -10 * 60 * 1000 });
  const skewed = await tokenRequest(c, signRS256(saClaims()));
  assert.equal(skewed.status, 400);
  assert.equal(skewed.json.error, 'invalid_grant');

  const log = await ctl('GET', '/control/requests?role=oauth');
  assert.equal(log.requests[0].jwt.header.alg, 'RS256');
  assert.equal(log.requests[0].jwt.claims.scope, FCM_SCOPE);
  assert.equal(log.requests[0].body.grant_type, 'urn:ietf:params:oauth:grant-type:jwt-bearer');
  assert.equal(log.requests[0].authOk, true);
  assert.equal(log.requests[2].authOk, false);
});

// ----- FCM -----------------------------------------------------------------------------------------------------
test('fcm: send ok, recorded with session and stream ids', async () => {
  const c = connect();
  const tok = await accessToken(c);
  const r = await fcmSend(c, tok, goodMessage());
  assert.equal(r.status, 200, r.text);
  assert.match(r.json.name, /^projects\/aprs-cloud-test\/messages\/0:\d+$/);
  const { requests } = await ctl('GET', '/control/requests?role=fcm');
  assert.equal(requests.length, 1);
  const rec = requests[0];
  assert.equal(rec.status, 200);
  assert.equal(rec.accessToken, tok);
  assert.equal(rec.headers.authorization, `Bearer ${tok}`);
  assert.equal(rec.body.message.data.fromCall, 'N0CALL');
  assert.equal(rec.deviceToken, 'fcm-token_1:APA91b');
  assert.ok(rec.messageBytes > 100 && rec.messageBytes < 400);
  assert.ok(rec.sessionId >= 1 && rec.streamId >= 1 && rec.at > 0);
  const all = await ctl('GET', '/control/requests');
  assert.equal(all.requests[0].sessionId, rec.sessionId, 'token exchange and send share the connection');
  // validate_only
  const v = await h2(c, { ':path': '/v1/projects/aprs-cloud-test/messages:send', 'content-type': 'application/json', authorization: `Bearer ${tok}` }, { validate_only: true, message: goodMessage() });
  assert.equal(v.json.name, 'projects/aprs-cloud-test/messages/fake_message_id');
});

test('fcm: missing, unknown, expired or revoked bearer → 401 without FcmError', async () => {
  const c = connect();
  const expect401 = (r, what) => {
    assert.equal(r.status, 401, what);
    assert.deepEqual(r.json, { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } }, what);
    assert.equal(fcmErrorCode(r.json), undefined);
  };
  expect401(await fcmSend(c, null, goodMessage()), 'missing');
  expect401(await fcmSend(c, 'ya29.not-ours', goodMessage()), 'unknown');
  const tok = await accessToken(c);
  assert.equal((await fcmSend(c, tok, goodMessage())).status, 200);
  await ctl('POST', '/control/set', { clockOffsetMs: 3600 * 1000 });
  expect401(await fcmSend(c, tok, goodMessage()), 'expired');
  await ctl('POST', '/control/set', { clockOffsetMs: 0, tokenLifetime: 5 });
  const short = await tokenRequest(c, signRS256(saClaims()));
  assert.equal(short.json.expires_in, 5);
  assert.equal((await fcmSend(c, short.json.access_token, goodMessage())).status, 200);
  await ctl('POST', '/control/set', { clockOffsetMs: 6000 });
  expect401(await fcmSend(c, short.json.access_token, goodMessage()), 'short lifetime expired');
  await ctl('POST', '/control/set', { clockOffsetMs: 0 });
  const tok2 = await accessToken(c);
  assert.deepEqual(await ctl('POST', '/control/revoke'), { ok: true, revoked: 3 });
  expect401(await fcmSend(c, tok2, goodMessage()), 'revoked');
  const { requests } = await ctl('GET', '/control/requests?role=fcm');
  assert.deepEqual(requests.map((r) => r.authError), ['missing bearer token', 'unknown access token', null, 'expired access token', null, 'expired access token', 'unknown access token']);
});

test('fcm: payload validation (reserved keys, types, token, ttl, size, unknown fields)', async () => {
  const c = connect();
  const tok = await accessToken(c);
  const bad = async (name, message, { code = 'INVALID_ARGUMENT', field } = {}) => {
    const r = await fcmSend(c, tok, message);
    assert.equal(r.status, 400, `${name}: ${r.text}`);
    assert.equal(r.json.error.status, 'INVALID_ARGUMENT', name);
    assert.equal(fcmErrorCode(r.json), code ?? undefined, name);
    const fields = fieldViolations(r.json).map((v) => v.field);
    if (field !== undefined) assert.ok(fields.includes(field), `${name}: ${JSON.stringify(fields)}`);
    if (field !== 'message.token') assert.ok(!fields.includes('message.token'), name);
    return r;
  };
  for (const key of ['from', 'notification', 'message_type', 'collapse_key', 'google.c.a', 'gcm.n.e', 'googleFoo']) {
    await bad(`reserved ${key}`, goodMessage({ data: { fromCall: 'N0CALL', [key]: 'x' } }), { field: 'message.data' });
  }
  await bad('number value', goodMessage({ data: { count: 3 } }), { code: null, field: 'message.data[0].value' });
  await bad('no token', goodMessage({ token: undefined }), { field: 'message' });
  await bad('bad token', goodMessage({ token: 'not a token!' }), { field: 'message.token' });
  await bad('ttl without s', goodMessage({ android: { ttl: '86400' } }), { code: null, field: 'message.android.ttl' });
  await bad('ttl number', goodMessage({ android: { ttl: 86400 } }), { code: null });
  await bad('priority', goodMessage({ android: { priority: 'urgent' } }), { code: null });
  await bad('unknown field', goodMessage({ android: { collapseKey: 'x', tll: '1s' } }), { code: null, field: 'message.android' });
  await bad('title not string', goodMessage({ notification: { title: 5 } }), { code: null });
  const big = await bad('oversized', goodMessage({ data: { fromCall: 'N0CALL', fromAvatarImage: 'A'.repeat(4000) } }));
  assert.match(big.json.error.message, /too big/);
  // Exactly at the limit is fine; one byte more is not.
  const base = goodMessage({ data: { pad: '' } });
  const pad = 4096 - Buffer.byteLength(JSON.stringify(base));
  assert.equal((await fcmSend(c, tok, goodMessage({ data: { pad: 'x'.repeat(pad) } }))).status, 200);
  await bad('4097 bytes', goodMessage({ data: { pad: 'x'.repeat(pad + 1) } }));
  // camelCase proto names are fine too
  assert.equal((await fcmSend(c, tok, goodMessage({ android: { collapseKey: 'k', ttl: '3.5s', notification: { tag: 't', channelId: 'c' } } }))).status, 200);
  const wrongProject = await h2(c, { ':path': '/v1/projects/other/messages:send', 'content-type': 'application/json', authorization: `Bearer ${tok}` }, { message: goodMessage() });
  assert.equal(wrongProject.status, 403);
  assert.equal(fcmErrorCode(wrongProject.json), undefined);
});

test('fcm: scripted UNREGISTERED, per-token sequence, 429 retry-after, 502 HTML', async () => {
  const c = connect();
  const tok = await accessToken(c);
  await ctl('POST', '/control/script', { role: 'fcm', errorCode: 'UNREGISTERED', status: 404 });
  const r = await fcmSend(c, tok, goodMessage());
  assert.equal(r.status, 404);
  assert.deepEqual(r.json, { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND', details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNREGISTERED' }] } });
  assert.equal((await fcmSend(c, tok, goodMessage())).status, 200, 'script consumed');

  assert.deepEqual(await ctl('POST', '/control/script', { role: 'fcm', token: 'tok1', responses: [{ status: 503 }, { status: 200 }] }), { ok: true, queued: 2 });
  assert.equal((await fcmSend(c, tok, goodMessage({ token: 'tok2' }))).status, 200, 'other tokens unaffected');
  const r1 = await fcmSend(c, tok, goodMessage({ token: 'tok1' }));
  assert.equal(r1.status, 503);
  assert.equal(fcmErrorCode(r1.json), 'UNAVAILABLE');
  const r2 = await fcmSend(c, tok, goodMessage({ token: 'tok1' }));
  assert.equal(r2.status, 200);
  assert.match(r2.json.name, /messages\/0:/);

  await ctl('POST', '/control/script', { role: 'fcm', status: 429, retryAfter: 7 });
  const q = await fcmSend(c, tok, goodMessage());
  assert.equal(q.status, 429);
  assert.equal(q.headers['retry-after'], '7');
  assert.equal(q.json.error.status, 'RESOURCE_EXHAUSTED');
  assert.equal(fcmErrorCode(q.json), 'QUOTA_EXCEEDED');
  await ctl('POST', '/control/script', { role: 'fcm', status: 429, errorCode: null });
  assert.equal(fcmErrorCode((await fcmSend(c, tok, goodMessage())).json), undefined);

  await ctl('POST', '/control/script', { role: 'fcm', status: 502, html: true });
  const h = await fcmSend(c, tok, goodMessage());
  assert.equal(h.status, 502);
  assert.match(h.headers['content-type'], /^text\/html/);
  assert.match(h.text, /^<!DOCTYPE html>/);

  await ctl('POST', '/control/script', { role: 'fcm', status: 400, field: 'message.token' });
  const inv = await fcmSend(c, tok, goodMessage());
  assert.equal(fcmErrorCode(inv.json), 'INVALID_ARGUMENT');
  assert.equal(fieldViolations(inv.json)[0].field, 'message.token');

  await ctl('POST', '/control/script', { role: 'fcm', status: 401 });
  const u = await fcmSend(c, tok, goodMessage());
  assert.equal(u.status, 401);
  assert.equal(u.json.error.details, undefined);

  await ctl('POST', '/control/script', { role: 'oauth', status: 400, error: 'invalid_grant' });
  const o = await tokenRequest(c, signRS256(saClaims()));
  assert.equal(o.status, 400);
  assert.equal(o.json.error, 'invalid_grant');

  const { requests } = await ctl('GET', '/control/requests?role=fcm');
  assert.deepEqual(requests.map((x) => x.status), [404, 200, 200, 503, 200, 429, 429, 502, 400, 401]);
  assert.equal(requests[0].scripted.errorCode, 'UNREGISTERED');
  assert.equal(requests[1].scripted, null);
});

// ----- APNs ----------------------------------------------------------------------------------------------------
test('apns: ok, apns-id header, empty body, JWT recorded', async () => {
  const c = connect();
  const r = await apnsSend(c);
  assert.equal(r.status, 200, r.text);
  assert.equal(r.text, '');
  assert.match(r.headers['apns-id'], /^[0-9A-F-]{36}$/);
  const id = crypto.randomUUID();
  const r2 = await apnsSend(c, { headers: { 'apns-id': id } });
  assert.equal(r2.headers['apns-id'], id);
  const { requests } = await ctl('GET', '/control/requests?role=apns');
  assert.equal(requests[0].jwt.header.alg, 'ES256');
  assert.equal(requests[0].jwt.header.kid, 'TESTKEY123');
  assert.deepEqual(Object.keys(requests[0].jwt.claims).sort(), ['iat', 'iss']);
  assert.equal(requests[0].headers['apns-topic'], 'org.example.htcommander');
  assert.equal(requests[0].body.aps.alert.title, 'N0CALL');
  assert.equal(requests[0].deviceToken, DEVICE);
});

test('apns: provider token errors (signature, DER, claims, expiry, update rate)', async () => {
  const c = connect();
  const expect = async (name, opts, status, reason) => {
    const r = await apnsSend(c, opts);
    assert.equal(r.status, status, `${name}: ${r.text}`);
    assert.equal(r.json?.reason, reason, name);
    assert.ok(r.headers['apns-id'], name);
  };
  const other = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  await expect('bad signature', { jwt: signES256(undefined, { key: other }) }, 403, 'InvalidProviderToken');
  await expect('DER signature', { jwt: signES256(undefined, { der: true }) }, 403, 'InvalidProviderToken');
  await expect('wrong kid', { jwt: signES256(undefined, { header: { kid: 'OTHER' } }) }, 403, 'InvalidProviderToken');
  await expect('extra claim', { jwt: signES256({ iss: 'TEAM123456', iat: nowS(), exp: nowS() + 60 }) }, 403, 'InvalidProviderToken');
  await expect('wrong team', { jwt: signES256({ iss: 'OTHERTEAM1', iat: nowS() }) }, 403, 'InvalidProviderToken');
  await expect('no auth', { headers: { authorization: undefined } }, 403, 'MissingProviderToken');
  await expect('old iat', { jwt: signES256({ iss: 'TEAM123456', iat: nowS() - 3700 }) }, 403, 'ExpiredProviderToken');

  // One JWT reused across many requests: fine. A different one within 20 minutes: 429.
  const jwt = signES256({ iss: 'TEAM123456', iat: nowS() - 60 });
  for (let i = 0; i < 5; i++) assert.equal((await apnsSend(c, { jwt })).status, 200);
  await expect('second JWT', { jwt: signES256({ iss: 'TEAM123456', iat: nowS() }) }, 429, 'TooManyProviderTokenUpdates');
  assert.equal((await apnsSend(c, { jwt })).status, 200, 'the accepted token stays valid');
  // After a scripted ExpiredProviderToken, re-signing once is allowed.
  await ctl('POST', '/control/script', { role: 'apns', status: 403, reason: 'ExpiredProviderToken' });
  await expect('scripted expired', { jwt }, 403, 'ExpiredProviderToken');
  assert.equal((await apnsSend(c, { jwt: signES256({ iss: 'TEAM123456', iat: nowS() + 1 }) })).status, 200);
  await ctl('POST', '/control/set', { enforceTokenUpdateRate: false });
  assert.equal((await apnsSend(c, { jwt: signES256({ iss: 'TEAM123456', iat: nowS() - 5 }) })).status, 200);
  // Settable key id / team / bundle.
  await ctl('POST', '/control/set', { apnsKeyId: 'KEY2', teamId: 'TEAM2', bundleId: 'org.example.other' });
  assert.equal((await apnsSend(c, { jwt: signES256({ iss: 'TEAM2', iat: nowS() }, { header: { kid: 'KEY2' } }), headers: { 'apns-topic': 'org.example.other' } })).status, 200);
});

test('apns: request errors and scripted answers', async () => {
  const c = connect();
  const jwt = signES256();
  const expect = async (name, opts, status, reason) => {
    const r = await apnsSend(c, { jwt, ...opts });
    assert.equal(r.status, status, `${name}: ${r.text}`);
    assert.equal(r.json?.reason, reason, name);
    return r;
  };
  await expect('missing topic', { headers: { 'apns-topic': undefined } }, 400, 'MissingTopic');
  await expect('bad topic', { headers: { 'apns-topic': 'org.example.wrong' } }, 400, 'BadTopic');
  await expect('no push type', { headers: { 'apns-push-type': undefined } }, 400, 'InvalidPushType');
  await expect('priority', { headers: { 'apns-priority': '7' } }, 400, 'BadPriority');
  await expect('expiration', { headers: { 'apns-expiration': 'tomorrow' } }, 400, 'BadExpirationDate');
  await expect('collapse id', { headers: { 'apns-collapse-id': 'x'.repeat(65) } }, 400, 'BadCollapseId');
  assert.equal((await apnsSend(c, { jwt, headers: { 'apns-collapse-id': 'x'.repeat(64) } })).status, 200);
  await expect('bad token', { token: 'xyz' }, 400, 'BadDeviceToken');
  await expect('too large', { payload: { aps: { alert: { body: 'x'.repeat(4100) } } } }, 413, 'PayloadTooLarge');
  const exact = { aps: { alert: { body: '' } } };
  exact.aps.alert.body = 'x'.repeat(4096 - Buffer.byteLength(JSON.stringify(exact)));
  assert.equal((await apnsSend(c, { jwt, payload: exact })).status, 200, '4096 bytes is fine');
  await expect('no aps', { payload: { alert: 'x' } }, 400, 'BadPayload');

  await ctl('POST', '/control/script', { role: 'apns', reason: 'Unregistered', status: 410, timestamp: 1800000000000 });
  const gone = await expect('410', {}, 410, 'Unregistered');
  assert.deepEqual(gone.json, { reason: 'Unregistered', timestamp: 1800000000000 });
  await ctl('POST', '/control/script', { role: 'apns', token: 'b'.repeat(64), responses: [{ status: 429 }, { status: 500 }, { status: 503 }] });
  await expect('other token unaffected', {}, 200, undefined);
  await expect('429', { token: 'B'.repeat(64) }, 429, 'TooManyRequests');
  await expect('500', { token: 'b'.repeat(64) }, 500, 'InternalServerError');
  await expect('503', { token: 'b'.repeat(64) }, 503, 'ServiceUnavailable');
  await expect('then ok', { token: 'b'.repeat(64) }, 200, undefined);
  const stats = await ctl('GET', '/control/stats');
  assert.equal(stats.apnsJwts, 1);
  assert.equal(stats.byRole.apns.byStatus['410'], 1);
});

// ----- connection behaviour, log, wait ------------------------------------------------------------------------
test('many concurrent streams share one connection; SETTINGS advertise 100 streams', async () => {
  const c = connect();
  await once(c, 'remoteSettings', 3000);
  assert.equal(c.remoteSettings.maxConcurrentStreams, 100);
  const jwt = signES256();
  await ctl('POST', '/control/script', { role: 'apns', delayMs: 100, times: 50 });
  const results = await Promise.all(Array.from({ length: 50 }, () => apnsSend(c, { jwt })));
  assert.ok(results.every((r) => r.status === 200));
  const { requests } = await ctl('GET', '/control/requests?role=apns');
  assert.equal(requests.length, 50);
  assert.equal(new Set(requests.map((r) => r.sessionId)).size, 1);
  assert.equal(new Set(requests.map((r) => r.streamId)).size, 50);
  assert.equal(new Set(requests.map((r) => r.jwt.raw)).size, 1);
  const stats = await ctl('GET', '/control/stats');
  assert.ok(stats.maxConcurrentStreams >= 40, `max concurrent ${stats.maxConcurrentStreams}`);
  assert.equal(stats.byRole.apns.byStatus['200'], 50);
});

test('apnsStreamGate: one stream until the first valid request', async () => {
  await ctl('POST', '/control/set', { apnsStreamGate: true });
  const c = connect();
  await once(c, 'remoteSettings', 3000);
  assert.equal(c.remoteSettings.maxConcurrentStreams, 1);
  const raised = once(c, 'remoteSettings', 3000, 'raised SETTINGS');
  assert.equal((await apnsSend(c)).status, 200);
  await raised;
  assert.equal(c.remoteSettings.maxConcurrentStreams, 100);
});

test('wait endpoint, delays, request log filters', async () => {
  const c = connect();
  const jwt = signES256();
  // Nothing yet: times out quickly with ok false.
  const t0 = Date.now();
  assert.deepEqual(await ctl('POST', '/control/wait', { role: 'apns', count: 1, timeoutMs: 200 }), { ok: false, count: 0 });
  assert.ok(Date.now() - t0 < 2000);
  await ctl('POST', '/control/script', { role: 'apns', delayMs: 300 });
  const waiting = ctl('POST', '/control/wait', { role: 'apns', count: 3, timeoutMs: 5000 });
  const answered = ctl('POST', '/control/wait', { role: 'apns', count: 3, status: 200, timeoutMs: 5000 });
  const sent = Promise.all([apnsSend(c, { jwt }), apnsSend(c, { jwt }), apnsSend(c, { jwt })]);
  assert.deepEqual(await waiting, { ok: true, count: 3 });
  const pending = await ctl('GET', '/control/requests?role=apns');
  assert.ok(pending.requests.some((r) => r.status === null), 'delayed request still pending');
  assert.deepEqual(await answered, { ok: true, count: 3 });
  const t1 = Date.now();
  await sent;
  assert.ok(Date.now() - t1 < 1000);
  const { requests } = await ctl('GET', '/control/requests');
  assert.ok(requests.some((r) => r.answeredAt - r.at >= 290), 'one answer was delayed');
  const since = await ctl('GET', `/control/requests?since=${requests[1].seq}`);
  assert.equal(since.requests.length, 1);
  // A client that times out during a scripted delay: recorded as aborted right away.
  await ctl('POST', '/control/script', { role: 'apns', delayMs: 20000 });
  await assert.rejects(h2(c, { ':path': `/3/device/${DEVICE}`, authorization: `bearer ${jwt}` }, '{}', 150), /timed out/);
  assert.deepEqual(await ctl('POST', '/control/wait', { role: 'apns', status: 'aborted', count: 1, timeoutMs: 3000 }), { ok: true, count: 1 });
  const st = await ctl('GET', '/control/stats');
  assert.equal(st.byRole.apns.aborted, 1);
  assert.equal(st.byRole.apns.pending, 0);
  await assert.rejects(ctl('POST', '/control/script', { role: 'fcm', status: 429, retry_after: 7 }), /unknown script field/);
  await assert.rejects(ctl('POST', '/control/set', { tokenLifetme: 5 }), /unknown setting/);
  await ctl('POST', '/control/clear');
  assert.equal((await ctl('GET', '/control/requests')).requests.length, 0);
  assert.equal((await ctl('GET', '/control/stats')).byRole.apns.total, 0);
});

test('scripted reset and GOAWAY; reconnect works', async () => {
  const c = connect();
  await ctl('POST', '/control/script', { role: 'apns', reset: true });
  await assert.rejects(apnsSend(c), /RST_STREAM|INTERNAL_ERROR|closed/i);
  await ctl('POST', '/control/script', { role: 'any', goaway: true });
  const goaway = once(c, 'goaway', 3000, 'GOAWAY');
  const r = await apnsSend(c);
  assert.equal(r.status, 200, 'the request before GOAWAY is answered');
  assert.equal(await goaway, 0);
  if (!c.closed && !c.destroyed) await once(c, 'close', 6000, 'session close');
  const c2 = connect();
  assert.equal((await apnsSend(c2)).status, 200);
  const stats = await ctl('GET', '/control/stats');
  assert.equal(stats.goawaysSent, 1);
  assert.equal(stats.sessionsOpened, 2, 'c and c2 since the clear');
  // GOAWAY on demand for all sessions.
  const g2 = once(c2, 'goaway', 3000, 'GOAWAY on demand');
  assert.ok((await ctl('POST', '/control/goaway')).sessions >= 1);
  await g2;
});

test('curl --http2 --cacert reaches the fake (token exchange and APNs)', async () => {
  const version = execFileSync('curl', ['-V'], { encoding: 'utf8', timeout: 5000 });
  assert.match(version, /^Features:.*\bHTTP2\b/m);
  const run = (args) => new Promise((resolve, reject) => {
    execFile('curl', ['-sS', '--http2', '--cacert', path.join(dir, 'ca.pem'), '--max-time', '10', '-w', '\n%{http_version} %{http_code}', ...args], { timeout: 15000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message} ${stderr}`)) : resolve(stdout)));
  });
  const out = await run(['--data-urlencode', 'grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer', '--data-urlencode', `assertion=${signRS256(saClaims())}`, `https://127.0.0.1:${port}/token`]);
  const [body, tail] = out.split('\n');
  assert.equal(tail, '2 200');
  assert.match(JSON.parse(body).access_token, /^ya29\.fake-/);
  const apnsOut = await run(['-H', `authorization: bearer ${apnsJwt}`, '-H', 'apns-topic: org.example.htcommander', '-H', 'apns-push-type: alert', '-H', 'apns-priority: 10',
    '-d', '{"aps":{"alert":{"title":"t","body":"b"}}}', `https://localhost:${port}/3/device/${DEVICE}`]);
  assert.equal(apnsOut.trim(), '2 200');
});

// ----- named answers per token, absurd values, fuzzing, environments --------------------------------------------
test('fcm: named answers per token, with the bodies FCM sends; other tokens get real answers', async () => {
  const c = connect();
  const tok = await accessToken(c);
  const answers = ['UNREGISTERED', 'SENDER_ID_MISMATCH', 'INVALID_TOKEN_FIELD', 'INVALID_TOKEN_MESSAGE', 'INVALID_ARGUMENT', 'THIRD_PARTY_AUTH_ERROR', 'PERMISSION_DENIED', 'UNAUTHENTICATED'];
  for (const answer of answers) assert.deepEqual(await ctl('POST', '/control/script', { role: 'fcm', token: `t-${answer}`, answer }), { ok: true, queued: 1 });
  const send = (token) => fcmSend(c, tok, goodMessage({ token }));
  const r = Object.fromEntries(await Promise.all(answers.map(async (a) => [a, await send(`t-${a}`)])));
  assert.equal((await send('someone-else')).status, 200, 'a token without a script gets a real answer');
  assert.deepEqual(r.UNREGISTERED.json, { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND', details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNREGISTERED' }] } });
  assert.equal(r.SENDER_ID_MISMATCH.status, 403);
  assert.equal(fcmErrorCode(r.SENDER_ID_MISMATCH.json), 'SENDER_ID_MISMATCH');
  assert.equal(r.SENDER_ID_MISMATCH.json.error.status, 'PERMISSION_DENIED');
  assert.deepEqual(r.INVALID_TOKEN_FIELD.json, { error: { code: 400, message: 'Request contains an invalid argument.', status: 'INVALID_ARGUMENT', details: [
    { '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'INVALID_ARGUMENT' },
    { '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'message.token', description: 'Invalid registration token' }] }] } });
  // What FCM answers today for a bad token: no fieldViolation, only the message says so.
  assert.deepEqual(r.INVALID_TOKEN_MESSAGE.json, { error: { code: 400, message: 'The registration token is not a valid FCM registration token', status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'INVALID_ARGUMENT' }] } });
  assert.deepEqual(r.INVALID_ARGUMENT.json, { error: { code: 400, message: 'Request contains an invalid argument.', status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'INVALID_ARGUMENT' }] } });
  assert.equal(r.THIRD_PARTY_AUTH_ERROR.status, 401);
  assert.equal(fcmErrorCode(r.THIRD_PARTY_AUTH_ERROR.json), 'THIRD_PARTY_AUTH_ERROR');
  assert.equal(r.PERMISSION_DENIED.status, 403);
  assert.equal(r.PERMISSION_DENIED.json.error.details, undefined);
  assert.equal(r.UNAUTHENTICATED.status, 401);
  assert.equal(r.UNAUTHENTICATED.json.error.details, undefined);
  // A field given next to the answer wins: a violation on another field.
  await ctl('POST', '/control/script', { role: 'fcm', token: 'ttl', answer: 'INVALID_ARGUMENT', field: 'message.android.ttl' });
  assert.deepEqual(fieldViolations((await send('ttl')).json).map((v) => v.field), ['message.android.ttl']);
  // The record shows the expanded entry; the token filter finds one device's requests.
  const { requests } = await ctl('GET', `/control/requests?role=fcm&token=${encodeURIComponent('t-UNREGISTERED')}`);
  assert.equal(requests.length, 1);
  assert.deepEqual(requests[0].scripted, { status: 404, errorCode: 'UNREGISTERED', answer: 'UNREGISTERED' });
  assert.equal(requests[0].body.message.token, 't-UNREGISTERED');
  await assert.rejects(ctl('POST', '/control/script', { role: 'fcm', answer: 'GONE' }), /unknown fcm answer .*GONE.*; known: UNREGISTERED, SENDER_ID_MISMATCH/);
  await assert.rejects(ctl('POST', '/control/script', { answer: 'UNREGISTERED' }), /answer needs role/);
});

test('apns: named answers; 410 timestamps absurd, negative, strings and raw literals; record keeps payload and headers', async () => {
  const c = connect('localhost');
  const token = (i) => `${'c'.repeat(62)}${String(i).padStart(2, '0')}`;
  const cases = [
    [{ answer: 'Unregistered', timestamp: 1e300 }, 410, '{"reason":"Unregistered","timestamp":1e+300}'],
    [{ answer: 'Unregistered', timestamp: -5 }, 410, '{"reason":"Unregistered","timestamp":-5}'],
    [{ answer: 'ExpiredToken', timestamp: 'soon' }, 410, '{"reason":"ExpiredToken","timestamp":"soon"}'],
    [{ answer: 'Unregistered', timestamp: 1.5 }, 410, '{"reason":"Unregistered","timestamp":1.5}'],
    [{ answer: 'Unregistered', timestamp: null }, 410, '{"reason":"Unregistered","timestamp":null}'],
    [{ answer: 'Unregistered', timestampRaw: '1e400' }, 410, '{"reason":"Unregistered","timestamp":1e400}'],
    [{ answer: 'Unregistered', timestampRaw: '123456789012345678901234567890' }, 410, '{"reason":"Unregistered","timestamp":123456789012345678901234567890}'],
    [{ answer: 'BadDeviceToken' }, 400, '{"reason":"BadDeviceToken"}'],
    [{ answer: 'DeviceTokenNotForTopic' }, 400, '{"reason":"DeviceTokenNotForTopic"}'],
    [{ answer: 'TooManyRequests', retryAfter: 30 }, 429, '{"reason":"TooManyRequests"}'],
    [{ answer: 'Shutdown' }, 503, '{"reason":"Shutdown"}'],
  ];
  for (const [i, [entry]] of cases.entries()) await ctl('POST', '/control/script', { role: 'apns', token: token(i), ...entry });
  for (const [i, [, status, text]] of cases.entries()) {
    const r = await apnsSend(c, { token: token(i) });
    assert.equal(r.status, status, text);
    assert.equal(r.text, text);
    assert.match(r.headers['apns-id'], /^[0-9A-F-]{36}$/);
  }
  const t0 = Date.now();
  await ctl('POST', '/control/script', { role: 'apns', token: token(99), answer: 'Unregistered' });
  const plain = await apnsSend(c, { token: token(99) });
  assert.ok(plain.json.timestamp >= t0 && plain.json.timestamp <= Date.now(), 'default timestamp: now, ms');
  // The record: the exact body sent, the payload (gcm.message_id) and every apns-* header.
  const payload = { aps: { alert: { title: 'N0CALL', body: 'hi' }, sound: 'default', 'thread-id': 'N0CALL-7' }, 'gcm.message_id': 'aprs-1234', fromCall: 'N0CALL' };
  assert.equal((await apnsSend(c, { payload, headers: { 'apns-collapse-id': 'N0CALL-7', 'apns-id': '11111111-2222-3333-4444-555555555555' } })).status, 200);
  const raw = (await ctl('GET', `/control/requests?role=apns&token=${token(5).toUpperCase()}`)).requests;
  assert.equal(raw.length, 1, 'the token filter ignores case for APNs');
  assert.equal(raw[0].responseText, '{"reason":"Unregistered","timestamp":1e400}');
  assert.equal(raw[0].response.timestamp, '1e400', 'raw literals show as their text in response');
  const last = (await ctl('GET', `/control/requests?role=apns&token=${DEVICE}`)).requests.at(-1);
  assert.equal(last.body['gcm.message_id'], 'aprs-1234');
  assert.equal(last.headers['apns-collapse-id'], 'N0CALL-7');
  assert.equal(last.headers['apns-push-type'], 'alert');
  assert.equal(last.headers['apns-priority'], '10');
  assert.equal(last.headers['apns-topic'], 'org.example.htcommander');
  assert.match(last.headers['apns-expiration'], /^\d+$/);
  assert.equal(last.headers['apns-id'], '11111111-2222-3333-4444-555555555555');
  assert.equal(last.environment, 'production');
  await assert.rejects(ctl('POST', '/control/script', { role: 'apns', answer: 'NotAReason' }), /unknown apns answer/);
  await assert.rejects(ctl('POST', '/control/script', { role: 'apns', answer: 'Unregistered', timestampRaw: 5 }), /timestampRaw must be a non-empty string/);
});

test('oauth: absurd expires_in (huge, negative, float, string, raw); the token still works for its real lifetime', async () => {
  const c = connect();
  const cases = [[1e300, '1e+300'], [-5, '-5'], [3599.5, '3599.5'], ['3599', '"3599"'], [null, 'null'], [0, '0']];
  for (const [value] of cases) await ctl('POST', '/control/script', { role: 'oauth', expiresIn: value });
  await ctl('POST', '/control/script', { role: 'oauth', expiresInRaw: '99999999999999999999999' });
  await ctl('POST', '/control/script', { role: 'oauth', answer: 'internal_failure' });
  for (const [, text] of [...cases, [null, '99999999999999999999999']]) {
    const r = await tokenRequest(c, signRS256(saClaims()));
    assert.equal(r.status, 200);
    assert.match(r.text, new RegExp(`^\\{"access_token":"ya29\\.fake-\\d+","expires_in":${text.replace(/[.+]/g, '\\$&')},"token_type":"Bearer"\\}$`));
    assert.equal((await fcmSend(c, JSON.parse(r.text.replace(/"expires_in":[^,]+/, '"expires_in":0')).access_token, goodMessage())).status, 200, `token from expires_in ${text} works`);
  }
  const failed = await tokenRequest(c, signRS256(saClaims()));
  assert.equal(failed.status, 500);
  assert.deepEqual(failed.json, { error: 'internal_failure', error_description: 'Backend Error' });
  // A bad JWT is still refused: expiresIn only changes a 200.
  await ctl('POST', '/control/script', { role: 'oauth', expiresIn: -1 });
  assert.equal((await tokenRequest(c, signRS256(saClaims({ iss: 'x@y' })))).status, 400);
});

test('fuzz: seeded garbage bodies, reproducible, every kind, recorded', async () => {
  const c = connect('localhost');
  const kinds = ['truncate', 'nonjson', 'binary', 'empty', 'bom', 'trailing', 'wrongType', 'hugeNumber', 'deep', 'longString', 'badString', 'duplicateKey'];
  const bodies = new Map();
  for (const fuzzKind of kinds) {
    for (const seed of [1, 2]) {
      await ctl('POST', '/control/script', { role: 'apns', answer: 'Unregistered', timestamp: 1700000000000, fuzz: seed, fuzzKind, times: 2 });
      const a = await apnsSend(c);
      const b = await apnsSend(c);
      assert.equal(a.status, 410, fuzzKind);
      assert.equal(a.headers['content-type'], 'application/json; charset=UTF-8');
      bodies.set(`${fuzzKind}/${seed}`, a.text);
      bodies.set(`${fuzzKind}/${seed}+1`, b.text);
    }
  }
  const parses = (t) => { try { JSON.parse(t); return true; } catch { return false; } };
  const original = '{"reason":"Unregistered","timestamp":1700000000000}';
  const value = '("Unregistered"|1700000000000|[^,{}]*)';
  for (const seed of ['1', '2', '1+1', '2+1']) {
    const b = (kind) => bodies.get(`${kind}/${seed}`);
    assert.equal(b('empty'), '');
    assert.ok(!parses(b('truncate')) && original.startsWith(b('truncate')), b('truncate'));
    assert.equal(b('bom'), `\ufeff${original}`);
    assert.ok(b('trailing').startsWith(original) && b('trailing').length > original.length && !parses(b('trailing')), b('trailing'));
    assert.match(b('hugeNumber'), new RegExp(`^\\{"reason":${value},"timestamp":${value}\\}$`));
    assert.ok(/1e300|1e400|1e-400|\d{19,}|e308|e-324|-0|0\.5|-1|3\.9{10}|1E\+2|0e0/.test(b('hugeNumber')), b('hugeNumber'));
    assert.ok(parses(b('wrongType')) && b('wrongType') !== original, b('wrongType'));
    assert.match(b('deep'), /(\[|\{"a":){17}/);
    assert.ok(b('longString').length > 4096 && parses(b('longString')));
    assert.match(b('badString'), /\\ud800|\\udc00|\\u0000|\\uD83D|\\x41|\t|\\u12"|\n|\u00e9/);
    assert.match(b('duplicateKey'), /^\{"(reason|timestamp)":.*"\1":/);
  }
  assert.notEqual(bodies.get('binary/1'), bodies.get('binary/2'));
  // Reproducible: the same seed and kind give the same body (times N moves the seed on: seed, seed+1).
  await ctl('POST', '/control/script', { role: 'apns', answer: 'Unregistered', timestamp: 1700000000000, fuzz: 2, fuzzKind: 'hugeNumber' });
  assert.equal((await apnsSend(c)).text, bodies.get('hugeNumber/1+1'));
  // Without fuzzKind the seed picks the kind; many seeds give many different bodies.
  await ctl('POST', '/control/script', { role: 'fcm', fuzz: 100, times: 40 });
  const tok = await accessToken(connect());
  const fcm = connect();
  const texts = new Set();
  for (let i = 0; i < 40; i++) {
    const r = await fcmSend(fcm, tok, goodMessage());
    assert.equal(r.status, 200, 'fuzz keeps the status of the answer it garbles');
    texts.add(r.text);
  }
  assert.ok(texts.size >= 20, `only ${texts.size} distinct bodies`);
  const { requests } = await ctl('GET', '/control/requests?role=fcm');
  const fuzzed = requests.filter((r) => r.fuzz);
  assert.equal(fuzzed.length, 40);
  assert.deepEqual(fuzzed.map((r) => r.fuzz.seed), Array.from({ length: 40 }, (_, i) => 100 + i));
  assert.ok(new Set(fuzzed.map((r) => r.fuzz.kind)).size >= 8);
  for (const r of fuzzed) {
    if (r.fuzz.kind === 'binary') assert.ok(r.responseBase64.length > 0);
    else assert.equal(typeof r.responseText, 'string');
  }
  const binary = (await ctl('GET', '/control/requests?role=apns')).requests.find((r) => r.fuzz?.kind === 'binary');
  assert.ok(Buffer.from(binary.responseBase64, 'base64').length >= 1);
  await assert.rejects(ctl('POST', '/control/script', { role: 'fcm', fuzz: 'x' }), /fuzz must be an integer seed/);
  await assert.rejects(ctl('POST', '/control/script', { role: 'fcm', fuzz: 1, fuzzKind: 'nope' }), /unknown fuzzKind nope/);
});

test('apns environments: --sandbox-port; a token of one environment is BadDeviceToken in the other', async () => {
  const readyFile = path.join(dir, 'ready-env.json');
  const env = spawn(process.execPath, [FAKE, '--dir', dir, '--port', '0', '--sandbox-port', '0', '--ready-file', readyFile, '--max-seconds', '60'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => env.on('exit', (code) => resolve(code)));
  try {
    const ready = JSON.parse(await readLine(env.stdout, 10000));
    assert.deepEqual(Object.keys(ready).sort(), ['control_port', 'port', 'sandbox_port']);
    assert.notEqual(ready.sandbox_port, ready.port);
    const ctlEnv = (method, p, body) => ctl(method, p, body, ready.control_port);
    const production = connect('localhost', ready.port);
    const sandbox = connect('localhost', ready.sandbox_port);
    const prodToken = 'a1'.repeat(32);
    const sandToken = 'b2'.repeat(32);
    const anyToken = 'c3'.repeat(32);
    assert.deepEqual(await ctlEnv('POST', '/control/tokens', { production: [prodToken], sandbox: [sandToken.toUpperCase()] }), { ok: true, production: 1, sandbox: 1 });
    const jwt = signES256();
    const expect = async (client, token, status, reason) => {
      const r = await apnsSend(client, { jwt, token });
      assert.equal(r.status, status, `${token.slice(0, 4)}: ${r.text}`);
      assert.equal(r.json?.reason, reason);
    };
    await expect(production, prodToken, 200);
    await expect(sandbox, prodToken, 400, 'BadDeviceToken');
    await expect(sandbox, sandToken, 200);
    await expect(production, sandToken, 400, 'BadDeviceToken');
    await expect(production, anyToken, 200);
    await expect(sandbox, anyToken, 200);
    // Scripts and records are shared; each record says which environment took it.
    await ctlEnv('POST', '/control/script', { role: 'apns', token: sandToken, answer: 'Unregistered' });
    await expect(sandbox, sandToken, 410, 'Unregistered');
    const { requests } = await ctlEnv('GET', '/control/requests?role=apns&environment=sandbox');
    assert.deepEqual(requests.map((r) => [r.deviceToken.slice(0, 2), r.status]), [['a1', 400], ['b2', 200], ['c3', 200], ['b2', 410]]);
    assert.ok(requests.every((r) => r.environment === 'sandbox'));
    assert.equal((await ctlEnv('GET', '/control/requests?role=apns&environment=production')).requests.length, 3);
    // Strict: a token registered nowhere is refused by both.
    await ctlEnv('POST', '/control/set', { apnsStrictTokens: true });
    await expect(production, anyToken, 400, 'BadDeviceToken');
    await expect(sandbox, anyToken, 400, 'BadDeviceToken');
    await expect(production, prodToken, 200);
    // A clear forgets the token environments.
    await ctlEnv('POST', '/control/clear');
    await ctlEnv('POST', '/control/set', { apnsStrictTokens: false });
    await expect(production, sandToken, 200);
    await assert.rejects(ctlEnv('POST', '/control/tokens', { staging: [prodToken] }), /unknown environment staging/);
    await assert.rejects(ctlEnv('POST', '/control/tokens', { sandbox: 'x' }), /must be an array/);
  } finally {
    env.kill('SIGTERM');
    assert.equal(await exited, 0);
  }
});
