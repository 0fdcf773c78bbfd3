#!/bin/sh
# make_push_credentials.sh DIR [BASE_URL]
#
# Throwaway credentials for one test run of the push sender against Tests/fakes/push_fake.mjs.
# Uses the `openssl` command line only. Nothing generated here is ever committed: DIR is the test's temp dir.
#
# Writes into DIR (created if missing, mode 0700; private files 0600):
#   ca.pem, ca-key.pem            throwaway CA (EC P-256), 2 days
#   server.pem, server-key.pem    server certificate signed by that CA, subjectAltName IP:127.0.0.1, DNS:localhost
#                                 (serverAuth), key in PEM PKCS#8
#   service-account-key.pem       RSA 2048 private key, PEM PKCS#8 (-----BEGIN PRIVATE KEY-----)
#   service-account-public.pem    its public key (the fake verifies RS256 JWTs with it)
#   service-account.json          Firebase-style service-account file: type service_account, project_id
#                                 aprs-cloud-test, private_key_id (40 hex), private_key (the PEM with \n escapes, as
#                                 in real files), client_email push@aprs-cloud-test.iam.gserviceaccount.com,
#                                 client_id, auth_uri, token_uri, auth_provider_x509_cert_url,
#                                 client_x509_cert_url, universe_domain
#   AuthKey_<KEYID>.p8            APNs auth key: EC P-256, PEM PKCS#8 (-----BEGIN PRIVATE KEY-----), like Apple's
#   apns-public.pem               its public key (the fake verifies ES256 JWTs with it)
#
# BASE_URL sets token_uri: either the fake's base URL (`https://127.0.0.1:PORT`, "/token" is appended) or the full
# token URL (`https://127.0.0.1:PORT/token`, used as is). Default `https://127.0.0.1:0/token` (a placeholder).
#
# Keys and certificates are only generated when missing, and service-account.json is always (re)written, so the
# usual sequence for a fake on an ephemeral port is:
#   make_push_credentials.sh "$DIR"                        # keys + certs (the fake needs the server cert)
#   node Tests/fakes/push_fake.mjs --dir "$DIR" ...        # prints {"port":N,"control_port":M}
#   make_push_credentials.sh "$DIR" "https://127.0.0.1:$N" # same keys, token_uri now points at the fake
# (The fake re-reads service-account.json on every token request, and also accepts as `aud` the URL the request
# was actually sent to, so the second call is only needed if the sender must find token_uri in the file.)
#
# Environment: APNS_KEY_ID (default TESTKEY123) names the .p8 file.
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 DIR [BASE_URL]" >&2
    exit 2
fi
DIR=$1
BASE=${2:-https://127.0.0.1:0}
KEY_ID=${APNS_KEY_ID:-TESTKEY123}
PROJECT=aprs-cloud-test
CLIENT_EMAIL=push@aprs-cloud-test.iam.gserviceaccount.com

case "$BASE" in
    */token) TOKEN_URI=$BASE ;;
    */) TOKEN_URI=${BASE}token ;;
    *) TOKEN_URI=$BASE/token ;;
esac

command -v openssl >/dev/null 2>&1 || { echo "$0: openssl not found" >&2; exit 1; }

umask 077
mkdir -p "$DIR"
cd "$DIR"

# Run openssl quietly; show its output only when it fails.
ossl() {
    if ! out=$(openssl "$@" 2>&1); then
        echo "$0: openssl $1 failed:" >&2
        echo "$out" >&2
        exit 1
    fi
}

# --- CA and server certificate -------------------------------------------------------------------------------
if [ ! -s ca.pem ] || [ ! -s ca-key.pem ]; then
    ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ca-key.pem
    ossl req -x509 -new -key ca-key.pem -sha256 -days 2 -out ca.pem \
        -subj "/O=aprs-cloud tests/CN=aprs-cloud throwaway push CA" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" \
        -addext "subjectKeyIdentifier=hash"
    rm -f server.pem server-key.pem
fi

if [ ! -s server.pem ] || [ ! -s server-key.pem ]; then
    ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out server-key.pem
    ossl req -new -key server-key.pem -sha256 -out server.csr -subj "/O=aprs-cloud tests/CN=127.0.0.1"
    cat > server.ext <<'EOF'
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid,issuer
EOF
    ossl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -sha256 -days 2 \
        -extfile server.ext -out server.pem
    rm -f server.csr server.ext ca.srl
fi

# --- FCM service account (RSA 2048, PKCS#8) -------------------------------------------------------------------
if [ ! -s service-account-key.pem ]; then
    ossl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out service-account-key.pem
    rm -f service-account-public.pem service-account.key-id
fi
if [ ! -s service-account-public.pem ]; then
    ossl pkey -in service-account-key.pem -pubout -out service-account-public.pem
fi
if [ ! -s service-account.key-id ]; then
    openssl rand -hex 20 > service-account.key-id
fi
KEY_HEX=$(cat service-account.key-id)
CLIENT_ID=$(od -An -N8 -tu8 /dev/urandom | tr -d ' \n')
# The PEM as one JSON string: each line followed by a literal \n (two characters), as in real files.
PEM_JSON=$(awk '{ printf "%s\\n", $0 }' service-account-key.pem)

cat > service-account.json.tmp <<EOF
{
  "type": "service_account",
  "project_id": "$PROJECT",
  "private_key_id": "$KEY_HEX",
  "private_key": "$PEM_JSON",
  "client_email": "$CLIENT_EMAIL",
  "client_id": "$CLIENT_ID",
  "auth_uri": "https://accounts.google.com/o/oauth2/auth",
  "token_uri": "$TOKEN_URI",
  "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
  "client_x509_cert_url": "https://www.googleapis.com/robot/v1/metadata/x509/push%40$PROJECT.iam.gserviceaccount.com",
  "universe_domain": "googleapis.com"
}
EOF
mv service-account.json.tmp service-account.json

# --- APNs auth key (.p8: EC P-256, PKCS#8) --------------------------------------------------------------------
P8=AuthKey_$KEY_ID.p8
if [ ! -s "$P8" ]; then
    ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$P8"
    rm -f apns-public.pem
fi
if [ ! -s apns-public.pem ]; then
    ossl pkey -in "$P8" -pubout -out apns-public.pem
fi

chmod 600 ca-key.pem server-key.pem service-account-key.pem service-account.json "$P8"
chmod 644 ca.pem server.pem service-account-public.pem apns-public.pem
