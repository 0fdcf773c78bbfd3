// The thinnest shim over libfcgi's FCGX_* API (the listening socket), and the Linux calls the
// FastCGI server's event loop needs that Swift's Glibc module does not export: epoll, eventfd and
// accept4 (a GNU extension, declared here because Glibc is built without _GNU_SOURCE).
#ifndef APRS_CLOUD_CFASTCGI_SHIM_H
#define APRS_CLOUD_CFASTCGI_SHIM_H
#include <stdio.h>
#include <fcgiapp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
#endif
