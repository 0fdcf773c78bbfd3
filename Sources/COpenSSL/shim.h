// The thinnest shim over OpenSSL 3: the headers the push signer, the Web Push encryption and the API's key
// checks need.
#ifndef APRS_CLOUD_COPENSSL_SHIM_H
#define APRS_CLOUD_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/err.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/sha.h>
#include <openssl/bio.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#endif
