/* Checks the TLS certificate and key before the server starts, so that a
 * mismatch is reported by file and problem rather than as a failed listen. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "emulator/base.h"

static int fail_ssl(const char *file, const char *what)
{
    char detail[256] = "";
    unsigned long e = ERR_peek_last_error();
    if (e)
        ERR_error_string_n(e, detail, sizeof detail);
    ERR_clear_error();
    return ocisbx_fail(OCISBX_ECONFIG, "%s: %s%s%s", file, what, detail[0] ? ": " : "", detail);
}

int emu_tls_check(const char *cert_file, const char *key_file)
{
    FILE *f = fopen(cert_file, "r");
    if (!f)
        return ocisbx_fail(OCISBX_ECONFIG, "--tls-cert %s: cannot open: %s", cert_file, strerror(errno));
    X509 *cert = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    if (!cert)
        return fail_ssl(cert_file, "not a PEM certificate");
    f = fopen(key_file, "r");
    if (!f) {
        X509_free(cert);
        return ocisbx_fail(OCISBX_ECONFIG, "--tls-key %s: cannot open: %s", key_file, strerror(errno));
    }
    EVP_PKEY *key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    if (!key) {
        X509_free(cert);
        return fail_ssl(key_file, "not an unencrypted PEM private key");
    }
    int rc = 0;
    if (X509_check_private_key(cert, key) != 1) {
        ERR_clear_error();
        rc =
            ocisbx_fail(OCISBX_ECONFIG, "%s: the private key does not match the certificate %s", key_file, cert_file);
    }
    EVP_PKEY_free(key);
    X509_free(cert);
    return rc;
}
