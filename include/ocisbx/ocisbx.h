/** @file
 * libocisbx: the whole public API. */
#ifndef OCISBX_H
#define OCISBX_H
#include "common.h"
#include "util.h"
#include "auth.h"
#include "http.h"
#include "api.h"
#include "settings.h"
#include "harness.h"
#include "engine.h"
#endif
