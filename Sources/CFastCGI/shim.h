// The thinnest shim over libfcgi's FCGX_* API.
#ifndef APRS_CLOUD_CFASTCGI_SHIM_H
#define APRS_CLOUD_CFASTCGI_SHIM_H
#include <stdio.h>
#include <fcgiapp.h>
#endif
