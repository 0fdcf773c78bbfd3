// The thinnest shim over libcurl: typed wrappers for its variadic setopt/getinfo functions, and what the
// opensocket callback does with a `struct curl_sockaddr` (read its address, open its socket).
#ifndef APRS_CLOUD_CCURL_SHIM_H
#define APRS_CLOUD_CCURL_SHIM_H
#include <curl/curl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

static inline CURLcode ccurl_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_easy_setopt_ptr(CURL *h, CURLoption o, const void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_easy_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
typedef size_t (*ccurl_write_callback)(char *ptr, size_t size, size_t nmemb, void *userdata);
static inline CURLcode ccurl_easy_setopt_write(CURL *h, CURLoption o, ccurl_write_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode ccurl_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ccurl_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ccurl_easy_getinfo_ptr(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode ccurl_easy_setopt_debug(CURL *h, curl_debug_callback v) { return curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, v); }
static inline CURLcode ccurl_easy_setopt_opensocket(CURL *h, curl_opensocket_callback v) { return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, v); }
// The address libcurl is about to connect to: its 4 (AF_INET) or 16 (AF_INET6) bytes into `out`, and their
// count; 0 for any other family. (libcurl's storage behind `addr` holds a whole sockaddr_in6.)
static inline int ccurl_sockaddr_ip(const struct curl_sockaddr *a, unsigned char out[16]) {
  if (a->family == AF_INET && a->addrlen >= sizeof(struct sockaddr_in)) {
    memcpy(out, &((const struct sockaddr_in *)&a->addr)->sin_addr, 4);
    return 4;
  }
  if (a->family == AF_INET6 && a->addrlen >= sizeof(struct sockaddr_in6)) {
    memcpy(out, &((const struct sockaddr_in6 *)&a->addr)->sin6_addr, 16);
    return 16;
  }
  return 0;
}
// What libcurl's own opensocket does: a socket of the address's family, type and protocol.
static inline curl_socket_t ccurl_open_socket(const struct curl_sockaddr *a) { return socket(a->family, a->socktype, a->protocol); }
static inline CURLMcode ccurl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
#endif
