/* The settings table's internals shared by the api layer (settings.c,
 * resolve.c, client.c). */
#ifndef OCISBX_API_SETTINGS_INTERNAL_H
#define OCISBX_API_SETTINGS_INTERNAL_H

#include <stddef.h>

#include "ocisbx/settings.h"

/* The number of rows, and a row's position in the table. */
size_t ocisbx_setting_count(void);
size_t ocisbx_setting_index(const ocisbx_setting *row);
/* The row's variables: the first set and not empty (its name in *which). */
const char *ocisbx_setting_env(const ocisbx_setting *row, const char **which);

#endif
