/* RSA keys for the test worlds without generating them each time.
 *
 * Every emulator fixture needs a user key and a session key (and, over
 * https, a CA key and a server key); generated afresh, the 2048-bit keys of
 * the suite's few hundred tenancies were a large part of its CPU time. The
 * pool keeps KEY_POOL_SIZE random keys as PEM files under
 * OCISBX_BINARY_DIR/test-key-pool/ (mode 0700): the first process that
 * needs key i generates it and renames it into place (a temporary name
 * first, so that a concurrent test never reads half a key); later ones
 * read it. The keys are made on the build machine by the first test run
 * and are never in the repository.
 *
 * Within one process, calls cycle through the pool: any KEY_POOL_SIZE
 * keys taken one after the other are different (two tenancies alive at
 * once in one test never share a key, nor the user and session keys of
 * one tenancy). Tests of key handling itself (generation, formats,
 * mismatched keys) keep generating their own keys. */
#ifndef OCISBX_TEST_KEY_POOL_H
#define OCISBX_TEST_KEY_POOL_H

#include <openssl/evp.h>

#define KEY_POOL_SIZE 16

/* The next 2048-bit RSA key of the pool (the caller frees it with
 * EVP_PKEY_free), or NULL with a line on stderr. */
EVP_PKEY *test_key_pool_rsa2048(void);

/* The same for 4096-bit keys (one takes seconds of CPU to generate), from
 * a pool of KEY_POOL_4096_SIZE. */
#define KEY_POOL_4096_SIZE 2
EVP_PKEY *test_key_pool_rsa4096(void);

#endif
