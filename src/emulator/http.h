/* The emulator's HTTP(S) listener (libmicrohttpd). */
#ifndef OCISBX_EMU_HTTP_H
#define OCISBX_EMU_HTTP_H

#include <netinet/in.h>

#include "emulator/emu.h"

typedef struct emu_http emu_http;

/* "127.0.0.1:0" -> address; anything but 127.0.0.0/8 (or localhost) is refused. */
int emu_http_parse_listen(const char *listen, struct sockaddr_in *out);
/* Starts listening (TLS when cert_file is given); the port is known at once. */
int emu_http_start(emu_server *s, const struct sockaddr_in *addr, const char *cert_file, const char *key_file,
                   emu_http **out);
int emu_http_port(const emu_http *h);
/* Stops accepting new connections; current ones go on. */
void emu_http_quiesce(emu_http *h);
/* Closes every connection (after emu_server_shutdown ended the streams) and frees. */
void emu_http_stop(emu_http *h);

#endif
