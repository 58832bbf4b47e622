/* The test key pool (see key_pool.h). */
#include "key_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/pem.h>
#include <openssl/rsa.h>

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned pool_next, pool4096_next;

static EVP_PKEY *read_key(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return NULL;
    EVP_PKEY *k = PEM_read_PrivateKey(fp, NULL, NULL, NULL);
    fclose(fp);
    return k;
}

/* Generates a key and renames it into place; the key even when the file
 * could not be written (the test still gets a key). */
static EVP_PKEY *make_key(const char *dir, const char *path, unsigned bits)
{
    EVP_PKEY *k = EVP_RSA_gen(bits);
    if (!k) {
        fprintf(stderr, "key_pool: cannot generate an RSA key\n");
        return NULL;
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return k;
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!fp) {
        if (fd >= 0)
            close(fd);
        return k;
    }
    int ok = PEM_write_PrivateKey(fp, k, NULL, NULL, 0, NULL, NULL) == 1;
    ok = (fclose(fp) == 0) && ok;
    if (!ok || rename(tmp, path) != 0)
        unlink(tmp);
    return k;
}

/* Key i of the pool of keys of bits bits. */
static EVP_PKEY *pooled(unsigned bits, unsigned i)
{
    char dir[400], path[500];
    snprintf(dir, sizeof dir, "%s/test-key-pool", OCISBX_BINARY_DIR);
    if (bits == 2048) /* the names the pool has always had */
        snprintf(path, sizeof path, "%s/rsa2048-%02u.pem", dir, i);
    else
        snprintf(path, sizeof path, "%s/rsa%u-%02u.pem", dir, bits, i);
    EVP_PKEY *k = read_key(path);
    if (k && (unsigned)EVP_PKEY_get_bits(k) != bits) {
        EVP_PKEY_free(k);
        k = NULL;
    }
    return k ? k : make_key(dir, path, bits);
}

EVP_PKEY *test_key_pool_rsa2048(void)
{
    pthread_mutex_lock(&pool_lock);
    unsigned i = pool_next++ % KEY_POOL_SIZE;
    pthread_mutex_unlock(&pool_lock);
    return pooled(2048, i);
}

EVP_PKEY *test_key_pool_rsa4096(void)
{
    pthread_mutex_lock(&pool_lock);
    unsigned i = pool4096_next++ % KEY_POOL_4096_SIZE;
    pthread_mutex_unlock(&pool_lock);
    return pooled(4096, i);
}
