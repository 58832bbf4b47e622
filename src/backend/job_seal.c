/* The seal on a local job's handle written in the workspace (local_job.h):
 * an HMAC-SHA256 keyed by a per-user key kept where no isolated command can
 * see it (the sandbox shows /usr, /bin, /lib*, /etc, its own /proc, /dev and
 * /tmp, and the workspace: never $XDG_RUNTIME_DIR nor the host's /tmp). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "backend/local_job.h"
#include "ocisbx/util.h"
#include "util/internal.h"

#define KEY_LEN 32
#define KEY_NAME "job.key"
#define SEAL_TAG "v1"
#define HANDLE_MAX 200

#define KEY_DIRS 3

/* The key's places, in order: $XDG_RUNTIME_DIR/ocisbx, /tmp/ocisbx-<uid>,
 * /dev/shm/ocisbx-<uid> (for a workspace that is /tmp itself). */
static int key_dirs(char dirs[KEY_DIRS][PATH_MAX])
{
    int n = 0;
    const char *x = getenv("XDG_RUNTIME_DIR");
    if (x && x[0] == '/' && (size_t)snprintf(dirs[n], PATH_MAX, "%s/ocisbx", x) < PATH_MAX)
        n++;
    snprintf(dirs[n++], PATH_MAX, "/tmp/ocisbx-%lu", (unsigned long)geteuid());
    snprintf(dirs[n++], PATH_MAX, "/dev/shm/ocisbx-%lu", (unsigned long)geteuid());
    return n;
}

/* Whether dir (or the place it would be made) lies in the workspace, where
 * the workspace's commands could read or plant a key. */
static bool inside(const char *workspace, const char *dir)
{
    char real[PATH_MAX];
    const char *slash = strrchr(dir, '/');
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%.*s", slash && slash != dir ? (int)(slash - dir) : 1, dir);
    if (!realpath(dir, real) && !realpath(parent, real))
        return false; /* not made yet, nor its parent: it cannot be made either */
    size_t wl = strlen(workspace);
    return strcmp(workspace, "/") == 0 || (strncmp(real, workspace, wl) == 0 && (!real[wl] || real[wl] == '/'));
}

/* The key directory, made 0700 when create; checked: a directory (not a
 * symlink) of this user's that nobody else can enter. ENOTFOUND without it. */
static int open_dir(const char *dir, bool create, int *out)
{
    if (create && mkdir(dir, 0700) != 0 && errno != EEXIST)
        return ocisbx_fail(OCISBX_EIO, "job key: cannot make %s: %s", dir, strerror(errno));
    struct stat st;
    if (lstat(dir, &st) != 0)
        return errno == ENOENT ? OCISBX_ENOTFOUND : ocisbx_fail(OCISBX_EIO, "job key: %s: %s", dir, strerror(errno));
    int fd = S_ISDIR(st.st_mode) ? open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (fd >= 0 && fstat(fd, &st) != 0) {
        close(fd);
        fd = -1;
    }
    if (fd < 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        if (fd >= 0)
            close(fd);
        return ocisbx_fail(OCISBX_EFORBIDDEN,
                           "job key: %s is not a private directory of this user (owner %lu, mode %04o): "
                           "remove it",
                           dir, (unsigned long)st.st_uid, (unsigned)(st.st_mode & 07777));
    }
    *out = fd;
    return 0;
}

static int read_key(int dfd, const char *dir, unsigned char key[KEY_LEN])
{
    int fd = openat(dfd, KEY_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? OCISBX_ENOTFOUND
                               : ocisbx_fail(OCISBX_EIO, "job key: %s/%s: %s", dir, KEY_NAME, strerror(errno));
    struct stat st;
    ssize_t n = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 077) == 0 &&
        st.st_size == KEY_LEN)
        n = read(fd, key, KEY_LEN);
    close(fd);
    if (n != KEY_LEN)
        return ocisbx_fail(OCISBX_EINTEGRITY, "job key: %s/%s is not a %d-byte file of this user's, mode 0600", dir,
                           KEY_NAME, KEY_LEN);
    return 0;
}

/* A new key from random bytes, written whole under a temporary name and
 * linked in place (a key that another process made first wins). */
static int make_key(int dfd, const char *dir, unsigned char key[KEY_LEN])
{
    char tmp[32] = KEY_NAME ".";
    int rc = ocisbx_random_id(tmp + strlen(tmp), 12);
    if (rc)
        return rc;
    if (RAND_bytes(key, KEY_LEN) != 1)
        return ocisbx_fail(OCISBX_EIO, "job key: no random bytes");
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return ocisbx_fail(OCISBX_EIO, "job key: cannot create a file in %s: %s", dir, strerror(errno));
    bool ok = write(fd, key, KEY_LEN) == KEY_LEN && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    int e = 0;
    if (ok && linkat(dfd, tmp, dfd, KEY_NAME, 0) != 0)
        e = errno;
    unlinkat(dfd, tmp, 0);
    OPENSSL_cleanse(key, KEY_LEN);
    if (!ok || (e && e != EEXIST))
        return ocisbx_fail(OCISBX_EIO, "job key: cannot write %s/%s: %s", dir, KEY_NAME, strerror(e ? e : EIO));
    return read_key(dfd, dir, key);
}

/* The key of dir (made with create); ENOTFOUND without one. */
static int dir_key(const char *dir, bool create, unsigned char key[KEY_LEN])
{
    int dfd = -1;
    int rc = open_dir(dir, create, &dfd);
    if (rc)
        return rc;
    rc = read_key(dfd, dir, key);
    if (rc == OCISBX_ENOTFOUND && create)
        rc = make_key(dfd, dir, key);
    close(dfd);
    return rc;
}

static int mac_hex(const unsigned char key[KEY_LEN], const char *workspace, const char *job_id, const char *handle,
                   char hex[65])
{
    ocisbx_buf m = OCISBX_BUF_INIT;
    int rc = ocisbx_buf_appends(&m, "ocisbx job handle " SEAL_TAG);
    const char *parts[] = {workspace, job_id, handle};
    for (size_t i = 0; i < 3 && !rc; i++)
        if (!(rc = ocisbx_buf_append(&m, "", 1))) /* NUL between the parts */
            rc = ocisbx_buf_appends(&m, parts[i]);
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int ol = 0;
    if (!rc && !HMAC(EVP_sha256(), key, KEY_LEN, (const unsigned char *)m.data, m.len, out, &ol))
        rc = ocisbx_fail(OCISBX_EIO, "job key: HMAC failed");
    ocisbx_buf_free(&m);
    if (!rc)
        ocisbx_hex(out, 32, hex);
    return rc;
}

int ocisbx_job_seal(const char *workspace, const char *job_id, const char *handle, char **text)
{
    *text = NULL;
    char dirs[KEY_DIRS][PATH_MAX];
    int n = key_dirs(dirs), rc = ocisbx_fail(OCISBX_EFORBIDDEN, "job key: every place for it is in the workspace");
    unsigned char key[KEY_LEN];
    for (int i = 0; i < n; i++) {
        if (inside(workspace, dirs[i]))
            continue;
        if ((rc = dir_key(dirs[i], true, key)) == 0)
            break;
    }
    char hex[65];
    if (!rc)
        rc = mac_hex(key, workspace, job_id, handle, hex);
    OPENSSL_cleanse(key, sizeof key);
    if (!rc && !(*text = ocisbx_asprintf(SEAL_TAG " %s %s\n", handle, hex)))
        rc = ocisbx_fail_nomem();
    return rc;
}

/* "v1 <handle> <64 hex>" with an optional newline: the handle (malloc'd). */
static char *split(const char *text, char hex[65])
{
    size_t tl = strlen(text);
    if (tl && text[tl - 1] == '\n')
        tl--;
    size_t pl = strlen(SEAL_TAG " ");
    if (tl < pl + 66 || tl > pl + HANDLE_MAX + 65 || strncmp(text, SEAL_TAG " ", pl) != 0 || text[tl - 65] != ' ' ||
        strspn(text + tl - 64, "0123456789abcdef") < 64)
        return NULL;
    memcpy(hex, text + tl - 64, 64);
    hex[64] = '\0';
    char *h = ocisbx_strndup(text + pl, tl - 65 - pl);
    if (h && strcspn(h, " \n") != strlen(h)) {
        free(h);
        return NULL;
    }
    return h;
}

int ocisbx_job_unseal(const char *workspace, const char *job_id, const char *text, char **handle)
{
    *handle = NULL;
    char want[65];
    char *h = split(text, want);
    if (!h)
        return ocisbx_fail(OCISBX_EINTEGRITY,
                           "job %s: its handle in the workspace is not a sealed handle: it was changed inside the "
                           "workspace (or written by an older version): refused, nothing killed",
                           job_id);
    char dirs[KEY_DIRS][PATH_MAX];
    int n = key_dirs(dirs);
    bool match = false, keyed = false;
    int rc = 0;
    for (int i = 0; i < n && !match && !rc; i++) {
        unsigned char key[KEY_LEN];
        char got[65];
        if (inside(workspace, dirs[i]))
            continue;
        int k = dir_key(dirs[i], false, key);
        if (k == OCISBX_ENOTFOUND) {
            ocisbx_error_clear();
            continue;
        }
        rc = k ? k : mac_hex(key, workspace, job_id, h, got);
        keyed = keyed || !k;
        match = !rc && CRYPTO_memcmp(got, want, 64) == 0;
        OPENSSL_cleanse(key, sizeof key);
    }
    if (!rc && !match)
        rc = ocisbx_fail(OCISBX_EINTEGRITY,
                         "job %s: its handle in the workspace does not carry this user's seal%s: it was changed "
                         "inside the workspace (or is another job's, another workspace's or another user's): "
                         "refused, nothing killed",
                         job_id, keyed ? "" : " (no job key here)");
    if (rc)
        free(h);
    else
        *handle = h;
    return rc;
}
