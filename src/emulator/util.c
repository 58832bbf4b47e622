/* Small helpers of the emulator: times, hashes, ids, directories, UTF-8. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "emulator/base.h"
#include "ocisbx/util.h"
#include "sys/proc.h"

/* The library's clock and RFC 3339 formatter: one of each in the tree. */
int64_t emu_now_ms(void)
{
    return ocisbx_time_now_ms();
}

void emu_time_rfc3339(int64_t ms, char out[32])
{
    if (ocisbx_time_format_rfc3339(ms, out) != 0)
        out[0] = '\0';
}

void emu_json_add_bytes(cJSON *o, const char *name, const char *data, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    ocisbx_buf b = OCISBX_BUF_INIT;
    int rc = ocisbx_buf_reserve(&b, len + len / 8 + 2);
    rc = rc ? rc : ocisbx_buf_append(&b, "\"", 1);
    size_t plain = 0; /* start of the run of bytes that need no escape */
    for (size_t i = 0; i <= len && rc == 0; i++) {
        unsigned char ch = i < len ? (unsigned char)data[i] : 0;
        if (i < len && ch >= 0x20 && ch != '"' && ch != '\\')
            continue;
        rc = ocisbx_buf_append(&b, data + plain, i - plain);
        plain = i + 1;
        if (i == len || rc)
            break;
        const char *shortesc = ch == '"'    ? "\\\""
                               : ch == '\\' ? "\\\\"
                               : ch == '\n' ? "\\n"
                               : ch == '\r' ? "\\r"
                               : ch == '\t' ? "\\t"
                               : ch == '\b' ? "\\b"
                               : ch == '\f' ? "\\f"
                                            : NULL;
        char esc[6] = {'\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15]};
        rc = shortesc ? ocisbx_buf_append(&b, shortesc, 2) : ocisbx_buf_append(&b, esc, sizeof esc);
    }
    rc = rc ? rc : ocisbx_buf_append(&b, "\"", 1);
    if (rc == 0)
        cJSON_AddRawToObject(o, name, b.data);
    else
        cJSON_AddStringToObject(o, name, ""); /* out of memory: an empty chunk, never a broken document */
    ocisbx_buf_free(&b);
}

void emu_json_add_time(cJSON *o, const char *name, int64_t ms)
{
    if (ms <= 0)
        return;
    char t[32];
    emu_time_rfc3339(ms, t);
    cJSON_AddStringToObject(o, name, t);
}

void emu_sha256_b64(const void *data, size_t len, char out[45])
{
    unsigned char md[32];
    unsigned int mdlen = 0;
    EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL);
    EVP_EncodeBlock((unsigned char *)out, md, 32);
}

void emu_new_id(const char *prefix, char *out, size_t cap)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
    unsigned char rnd[16];
    if (RAND_bytes(rnd, sizeof rnd) != 1) {
        for (size_t i = 0; i < sizeof rnd; i++)
            rnd[i] = (unsigned char)rand();
    }
    char tail[17];
    for (int i = 0; i < 16; i++)
        tail[i] = alphabet[rnd[i] & 31];
    tail[16] = 0;
    snprintf(out, cap, "%s%s", prefix, tail);
}

uint64_t emu_rand(uint64_t *state)
{
    /* splitmix64: deterministic for a given seed and request order */
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int emu_mkdirs(const char *path)
{
    char *p = ocisbx_strdup(path);
    if (!p)
        return -1;
    for (char *q = p + 1; *q; q++) {
        if (*q == '/') {
            *q = 0;
            if (mkdir(p, 0700) != 0 && errno != EEXIST) {
                free(p);
                return -1;
            }
            *q = '/';
        }
    }
    int rc = (mkdir(p, 0700) != 0 && errno != EEXIST) ? -1 : 0;
    free(p);
    return rc;
}

int emu_grow(void *items, size_t n, size_t *cap, size_t first, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : first;
    void *old;
    memcpy(&old, items, sizeof old); /* items points at some T *: same representation as void * */
    void *p = realloc(old, c * size);
    if (!p)
        return -1;
    memcpy(items, &p, sizeof p);
    *cap = c;
    return 0;
}

int emu_rmtree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode))
        return unlink(path);
    /* Commands may have left read-only directories: make it removable. */
    chmod(path, 0700);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *sub = ocisbx_asprintf("%s/%s", path, e->d_name);
        if (!sub || emu_rmtree(sub) != 0)
            rc = -1;
        free(sub);
    }
    closedir(d);
    if (rmdir(path) != 0)
        rc = -1;
    return rc;
}

static int copy_file(const char *src, const char *dst, mode_t mode, int64_t *bytes)
{
    int in = open(src, O_RDONLY | O_NOFOLLOW);
    if (in < 0)
        return -1;
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, mode & 0777);
    if (out < 0) {
        close(in);
        return -1;
    }
    char buf[65536];
    ssize_t n;
    int rc = 0;
    while ((n = read(in, buf, sizeof buf)) > 0) {
        if (write(out, buf, (size_t)n) != n) {
            rc = -1;
            break;
        }
        *bytes += n;
    }
    if (n < 0)
        rc = -1;
    close(in);
    if (close(out) != 0)
        rc = -1;
    return rc;
}

/* Gives dfd and everything under it (symlinks themselves, never followed)
 * to uid:gid. */
static int chown_tree_fd(int dfd, uid_t uid, gid_t gid, int depth)
{
    if (depth > 256 || fchown(dfd, uid, gid) != 0)
        return -1;
    int dup_fd = dup(dfd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        struct stat st;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue; /* gone meanwhile */
        if (S_ISDIR(st.st_mode)) {
            int sub = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0 || chown_tree_fd(sub, uid, gid, depth + 1) != 0)
                rc = -1;
            if (sub >= 0)
                close(sub);
        } else if ((st.st_uid != uid || st.st_gid != gid) &&
                   fchownat(dfd, e->d_name, uid, gid, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = -1;
        }
    }
    closedir(d);
    return rc;
}

int emu_workspace_own(const char *dir, unsigned uid)
{
    if (geteuid() != 0)
        return 0;
    if (uid == 0) {
        errno = EINVAL;
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0)
        rc = -1;
    else if (st.st_uid != uid || st.st_gid != uid)
        rc = chown_tree_fd(fd, (uid_t)uid, (gid_t)uid, 0);
    close(fd);
    return rc;
}

/* Adds the use of everything in dfd to *sum; *left counts down the entries. */
static void tree_use_fd(int dfd, int depth, int64_t *sum, long *left, bool *capped)
{
    int dup_fd = dup(dfd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (*left <= 0) {
            *capped = true;
            break;
        }
        --*left;
        struct stat st;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue; /* gone meanwhile */
        *sum += (int64_t)st.st_blocks * 512;
        if (S_ISDIR(st.st_mode)) {
            if (depth >= 256) {
                *capped = true;
                continue;
            }
            int sub = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) {
                tree_use_fd(sub, depth + 1, sum, left, capped);
                close(sub);
            }
        }
    }
    closedir(d);
}

int64_t emu_tree_use(const char *dir, long max_entries, bool *capped)
{
    bool cap = false;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    int64_t sum = fstat(fd, &st) == 0 ? (int64_t)st.st_blocks * 512 : 0;
    long left = max_entries;
    tree_use_fd(fd, 0, &sum, &left, &cap);
    close(fd);
    if (capped)
        *capped = cap;
    return sum;
}

int emu_copytree(const char *src, const char *dst, int64_t *bytes)
{
    struct stat st;
    if (lstat(src, &st) != 0)
        return -1;
    if (S_ISLNK(st.st_mode)) {
        char target[4096];
        ssize_t n = readlink(src, target, sizeof target - 1);
        if (n < 0)
            return -1;
        target[n] = 0;
        return symlink(target, dst);
    }
    if (S_ISREG(st.st_mode))
        return copy_file(src, dst, st.st_mode, bytes);
    if (!S_ISDIR(st.st_mode))
        return 0; /* fifos, sockets, devices: not part of a snapshot */
    if (mkdir(dst, st.st_mode & 0777) != 0 && errno != EEXIST)
        return -1;
    DIR *d = opendir(src);
    if (!d)
        return -1;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *a = ocisbx_asprintf("%s/%s", src, e->d_name);
        char *b = ocisbx_asprintf("%s/%s", dst, e->d_name);
        if (!a || !b || emu_copytree(a, b, bytes) != 0)
            rc = -1;
        free(a);
        free(b);
    }
    closedir(d);
    return rc;
}

bool emu_valid_request_id(const char *id)
{
    size_t n = 0;
    for (const char *p = id; *p; p++, n++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              c == '/'))
            return false;
    }
    return n > 0 && n <= 98;
}

char *emu_read_file(const char *path, size_t *len)
{
    /* the library's bounded reader; errno for the callers that test it */
    ocisbx_file f;
    int rc = ocisbx_file_read(path, "file", EMU_FILE_MAX, OCISBX_READ_REGULAR, &f);
    if (rc) {
        errno = rc == OCISBX_ENOTFOUND ? ENOENT : rc == OCISBX_ENOMEM ? ENOMEM : rc == OCISBX_ETOOLARGE ? EFBIG : EIO;
        return NULL;
    }
    return ocisbx_file_detach(&f, len);
}

int emu_write_file_atomic(const char *path, const void *data, size_t len)
{
    char suffix[20];
    emu_new_id(".tmp-", suffix, sizeof suffix);
    char *tmp = ocisbx_asprintf("%s%s", path, suffix);
    if (!tmp)
        return -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    if (fd < 0) {
        free(tmp);
        return -1;
    }
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            close(fd);
            unlink(tmp);
            free(tmp);
            return -1;
        }
        p += w;
        left -= (size_t)w;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}
